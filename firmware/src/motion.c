/* Step execution. HOME completes at once: this board has no home switches. There are
 * no stall, limit or driver-fault inputs, so STALL, LIMIT and DRIVER are never raised.
 *
 * Turns overlap in a version-3 session: the next turn is armed while the one before runs
 * and the step interrupt starts it as soon as every moving motor of an adjacent face is
 * within its overlap= steps of aligned (opposite faces do not wait at all, the same motor
 * waits until it has stopped). Any other step waits until every motor has stopped. DONEs
 * go out in queue order. */
#include <string.h>
#include "motion.h"
#include "config.h"
#include "fault.h"
#include "out.h"
#include "profile.h"
#include "queue.h"
#include "step.h"
#include "stepper.h"

struct motor_cfg {
    uint16_t steps, rate, accel;        /* per quarter turn, steps/s, 100 steps/s^2 */
    uint16_t overlap;                   /* steps before aligned at which an adjacent face may start */
    int8_t dir;
};

/* A step started or armed. left: its axes no later step has taken over (a later step only
 * takes an axis that has stopped); it is done once none of them is moving or armed.
 * alone: a JOG, nothing starts beside it. */
struct run { uint16_t mid; uint8_t left, alone; };

static struct motor_cfg cfg[AXES];
static struct run running[AXES];        /* moves started or armed, oldest first */
static uint8_t run_head, run_count;
static uint8_t overlapping;             /* version 3: turns may overlap */
static uint8_t enabled;
static uint16_t speed_ms, done;

void motion_init(void)
{
    for (uint8_t i = 0; i < AXES; i++)
        cfg[i] = (struct motor_cfg){DEF_STEPS, DEF_RATE, DEF_ACCEL, 0, 1};
    motion_drivers_off();
}

void motion_drivers_off(void)
{
    enabled = 0;
    stepper_enable(ALL_AXES, 0);
}

void motion_halt(void)
{
    stepper_stop();
    motion_drivers_off();
}

uint8_t motion_stop(void)
{
    uint8_t busy = motion_busy();
    stepper_stop();
    queue_clear();
    run_count = 0;
    return busy != 0;
}

uint8_t motion_busy(void) { return (uint8_t)(queue_count() + run_count); }
uint16_t motion_done(void) { return done; }
void motion_new_session(uint8_t proto)
{
    done = 0;
    overlapping = proto >= 3;
}
uint8_t motion_enabled(void) { return enabled; }
uint16_t motion_speed(void) { return speed_ms; }

/* Axes a step moves (in the order of its arguments for the DISABLED report). */
static uint8_t step_axes(const struct step *s, uint8_t *first_off)
{
    uint8_t mask = 0;
    *first_off = NO_MOTOR;
    if (s->verb == V_TURN || s->verb == V_PAIR) {
        for (uint8_t k = 0; k < (s->verb == V_PAIR ? 2 : 1); k++) {
            uint8_t m = s->u.turn.motor[k];
            mask |= (uint8_t)(1 << m);
            if (!(enabled & (1 << m)) && *first_off == NO_MOTOR)
                *first_off = m;
        }
        return mask;
    }
    mask = s->mask;
    for (uint8_t m = 0; m < AXES && *first_off == NO_MOTOR; m++)
        if ((mask & (1 << m)) && !(enabled & (1 << m)))
            *first_off = m;
    return mask;
}

static void move_axis(uint8_t m, int32_t steps)
{
    const struct motor_cfg *c = &cfg[m];
    uint8_t positive = (steps > 0) == (c->dir > 0);
    uint16_t n = (uint16_t)(steps < 0 ? -steps : steps);
    float v = profile_cruise(c->steps, c->rate, c->accel, speed_ms);
    profile_load(stepper_prepare(m, positive), n, v, c->accel);
}

/* Gates of a turn on the motors in mask (docs/protocol.md section 17). */
static void turn_gates(uint8_t mask, uint16_t *gate)
{
    for (uint8_t a = 0; a < AXES; a++) {
        uint8_t across = 0;
        for (uint8_t m = 0; m < AXES; m++)
            if ((mask & (1 << m)) && opposite(a, m))
                across = 1;
        gate[a] = !overlapping ? 0 : across ? NO_GATE : cfg[a].overlap;
    }
}

/* Prepare a TURN, PAIR or JOG and arm it; the step runs until its axes stop. */
static void start_move(const struct step *s)
{
    uint8_t mask = 0;
    if (s->verb == V_JOG) {
        for (uint8_t m = 0; m < AXES; m++)
            if (s->mask & (1 << m))
                move_axis(m, s->u.jog[m]);
        mask = s->mask;
    } else {
        for (uint8_t k = 0; k < (s->verb == V_PAIR ? 2 : 1); k++) {
            uint8_t m = s->u.turn.motor[k];
            move_axis(m, (int32_t)s->u.turn.q[k] * cfg[m].steps);
            mask |= (uint8_t)(1 << m);
        }
    }
    uint16_t gate[AXES];
    turn_gates(s->verb == V_JOG ? 0 : mask, gate);
    if (s->verb == V_JOG)
        for (uint8_t a = 0; a < AXES; a++)
            gate[a] = 0;
    stepper_arm(mask, gate);
}

static void set_motor(const struct step *s)
{
    struct motor_cfg *c = &cfg[s->mask];
    c->steps = s->u.motor.steps;
    c->rate = s->u.motor.rate;
    c->accel = s->u.motor.accel;
    c->dir = s->u.motor.dir;
    c->overlap = s->u.motor.overlap;
}

/* Returns 1 when the step finished at once. */
static uint8_t start(const struct step *s)
{
    uint8_t off;
    switch (s->verb) {
    case V_ENABLE:
        enabled |= s->mask;
        stepper_enable(s->mask, 1);
        return 1;
    case V_DISABLE:
        enabled &= (uint8_t)~s->mask;
        stepper_enable(s->mask, 0);
        return 1;
    case V_SPEED:
        speed_ms = s->u.ms;
        return 1;
    case V_MOTOR:
        set_motor(s);
        return 1;
    default:
        break;
    }
    step_axes(s, &off);
    if (off != NO_MOTOR) {
        fault_latch(C_DISABLED, s->mid, NO_SEQ, off);
        return 0;
    }
    if (s->verb == V_HOME)
        return 1;                       /* no home switches on this board */
    start_move(s);
    return 0;
}

static void finish(uint16_t mid)
{
    done = mid;
    out_begin();
    out_pstr(PSTR("DONE "));
    out_uint(done);
    out_end();
}

static uint8_t is_move(const struct step *s)
{
    return s->verb == V_TURN || s->verb == V_PAIR || s->verb == V_JOG;
}

/* Whether the next step may start now: a turn once its own motors are free, nothing else is
 * armed and no JOG runs (version 3); anything else once every motor has stopped. A JOG only
 * starts with nothing running, so while one runs it is the oldest entry. */
static uint8_t may_start(const struct step *s)
{
    uint8_t off;
    if (!run_count)
        return 1;
    if (!overlapping || s->verb == V_JOG || !is_move(s) || run_count == AXES || stepper_armed())
        return 0;
    if (running[run_head].alone)
        return 0;
    return !(step_axes(s, &off) & stepper_active());
}

void motion_poll(void)
{
    uint8_t busy = stepper_busy();
    while (run_count && !(running[run_head].left & busy)) {
        finish(running[run_head].mid);
        run_head = (uint8_t)((run_head + 1) % AXES);
        run_count--;
    }
    while (queue_count() && fault_code() == C_NONE && may_start(queue_peek())) {
        struct step s = *queue_pop();
        if (start(&s)) {
            finish(s.mid);
        } else if (fault_code() == C_NONE) {
            uint8_t off, axes = step_axes(&s, &off);
            for (uint8_t k = 0; k < run_count; k++)
                running[(uint8_t)((run_head + k) % AXES)].left &= (uint8_t)~axes;
            running[(uint8_t)((run_head + run_count) % AXES)] = (struct run){s.mid, axes, s.verb == V_JOG};
            run_count++;
        }
    }
}
