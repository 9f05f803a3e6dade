/* Step generation from the Timer1 compare interrupt.
 *
 * Every tick each moving axis adds its velocity to its phase; a carry raises its STEP
 * pin. One axis per tick gets its velocity updated (round robin). The STEP pins raised
 * in a tick are lowered at the end of the same interrupt, at least PULSE_TICKS timer
 * counts (2.5 us) after the last one rose. DIR is written while the axis is idle,
 * at least one tick before its first step. */
#include <avr/io.h>
#include <avr/interrupt.h>
#include <util/atomic.h>
#include "stepper.h"
#include "config.h"
#include "pins.h"
#include "step.h"

#define TIMER_TOP ((uint16_t)(F_CPU / TICK_HZ - 1))
#define PULSE_TICKS 40                  /* 2.5 us at 16 MHz */

#define AXIS_ENUM(n, sp, sb, dp, db, ep, eb) AX_##n,
enum { ROBOTD_AXES(AXIS_ENUM) AX_COUNT };
typedef char axes_are_six[AX_COUNT == AXES ? 1 : -1];

static struct axis ax[AXES];
static volatile uint8_t active;
static volatile uint8_t armed;          /* axes to start once the gates open */
static uint8_t gated;                   /* axes whose steps left are gated */
static uint16_t gate[AXES];
static volatile uint8_t holds;          /* ESTOP lines received and not yet judged */
static uint8_t update_next;

static void pins_init(void)
{
#define PIN_INIT(n, sp, sb, dp, db, ep, eb) \
    PORT##ep |= _BV(eb); DDR##ep |= _BV(eb); \
    PORT##sp &= (uint8_t)~_BV(sb); DDR##sp |= _BV(sb); \
    PORT##dp &= (uint8_t)~_BV(db); DDR##dp |= _BV(db);
    ROBOTD_AXES(PIN_INIT)
#undef PIN_INIT
}

void stepper_init(void)
{
    pins_init();
    TCCR1A = 0;
    TCCR1B = _BV(WGM12);                /* CTC on OCR1A */
    OCR1A = TIMER_TOP;                  /* non-zero before the interrupt is on */
    TCNT1 = 0;
    TIMSK1 = _BV(OCIE1A);
    TCCR1B |= _BV(CS10);                /* prescaler 1 */
}

void stepper_enable(uint8_t mask, uint8_t on)
{
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
#define EN_SET(n, sp, sb, dp, db, ep, eb) \
        if (mask & _BV(AX_##n)) { if (on) PORT##ep &= (uint8_t)~_BV(eb); else PORT##ep |= _BV(eb); }
        ROBOTD_AXES(EN_SET)
#undef EN_SET
    }
}

static void dir_write(uint8_t i, uint8_t high)
{
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
#define DIR_SET(n, sp, sb, dp, db, ep, eb) \
        if (i == AX_##n) { if (high) PORT##dp |= _BV(db); else PORT##dp &= (uint8_t)~_BV(db); }
        ROBOTD_AXES(DIR_SET)
#undef DIR_SET
    }
}

struct axis *stepper_prepare(uint8_t i, uint8_t dir_high)
{
    dir_write(i, dir_high);
    return &ax[i];                      /* idle: the interrupt does not touch it */
}

void stepper_arm(uint8_t mask, const uint16_t *gates)
{
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
        gated = 0;
        for (uint8_t i = 0; i < AXES; i++) {
            gate[i] = gates[i];
            if (gates[i] != NO_GATE)
                gated |= (uint8_t)(1 << i);
        }
        armed = mask;
    }
}

uint8_t stepper_armed(void) { return armed; }

uint8_t stepper_busy(void)
{
    uint8_t busy;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) { busy = active | armed; }
    return busy;
}

uint8_t stepper_active(void) { return active; }

void stepper_stop(void)
{
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
        active = 0;
        armed = 0;
        for (uint8_t i = 0; i < AXES; i++)
            ax[i].remaining = 0;
    }
}

static uint16_t elapsed_since(uint16_t t0)
{
    uint16_t now = TCNT1;
    return now >= t0 ? now - t0 : (uint16_t)(now + TIMER_TOP + 1 - t0);
}

void stepper_hold(void)
{
    if (holds < 255)
        holds++;
}

void stepper_release(void)
{
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
        if (holds)
            holds--;
    }
}

/* Interrupt context: 1 when every gated axis still moving is within its gate. */
static uint8_t gates_open(uint8_t act)
{
    uint8_t watch = act & gated;
    for (uint8_t i = 0; watch; i++, watch >>= 1)
        if ((watch & 1) && ax[i].remaining > gate[i])
            return 0;
    return 1;
}

ISR(TIMER1_COMPA_vect)
{
    uint8_t act = active, stepped = 0;
    if (holds)
        return;
    if (armed && gates_open(act)) {
        act |= armed;                   /* DIR was written when the axes were prepared */
        armed = 0;
    }
    if (!act) {
        active = 0;
        return;
    }
#define TICK(n, sp, sb, dp, db, ep, eb) \
    if ((act & _BV(AX_##n)) && axis_tick(&ax[AX_##n])) { \
        PORT##sp |= _BV(sb); \
        stepped |= _BV(AX_##n); \
        if (!ax[AX_##n].remaining) act &= (uint8_t)~_BV(AX_##n); \
    }
    ROBOTD_AXES(TICK)
#undef TICK
    uint16_t t0 = TCNT1;
    if (act & _BV(update_next))
        axis_update(&ax[update_next]);
    update_next = update_next == AXES - 1 ? 0 : update_next + 1;
    active = act;
    if (!stepped)
        return;
    while (elapsed_since(t0) < PULSE_TICKS)
        ;                               /* bounded: completes a >= 2.5 us pulse */
#define LOWER(n, sp, sb, dp, db, ep, eb) if (stepped & _BV(AX_##n)) PORT##sp &= (uint8_t)~_BV(sb);
    ROBOTD_AXES(LOWER)
#undef LOWER
}
