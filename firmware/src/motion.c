/* Step execution. HOME completes at once: this board has no home switches. There are
 * no stall, limit or driver-fault inputs, so STALL, LIMIT and DRIVER are never raised. */
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
    int8_t dir;
};

static struct motor_cfg cfg[AXES];
static struct step running;
static uint8_t is_running;
static uint8_t enabled;
static uint16_t speed_ms, done;

void motion_init(void)
{
    for (uint8_t i = 0; i < AXES; i++)
        cfg[i] = (struct motor_cfg){DEF_STEPS, DEF_RATE, DEF_ACCEL, 1};
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
    is_running = 0;
    return busy != 0;
}

uint8_t motion_busy(void) { return (uint8_t)(queue_count() + is_running); }
uint16_t motion_done(void) { return done; }
void motion_new_session(void) { done = 0; }
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

/* Start a TURN, PAIR or JOG; the step runs until its axes stop. */
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
    stepper_go(mask);
}

static void set_motor(const struct step *s)
{
    struct motor_cfg *c = &cfg[s->mask];
    c->steps = s->u.motor.steps;
    c->rate = s->u.motor.rate;
    c->accel = s->u.motor.accel;
    c->dir = s->u.motor.dir;
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

static void finish(void)
{
    is_running = 0;
    done = running.mid;
    out_begin();
    out_pstr(PSTR("DONE "));
    out_uint(done);
    out_end();
}

void motion_poll(void)
{
    if (is_running && !stepper_active())
        finish();
    while (!is_running && queue_count() && fault_code() == C_NONE) {
        running = *queue_pop();
        is_running = 1;
        if (start(&running))
            finish();
    }
}
