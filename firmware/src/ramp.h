/* Per-axis step generation, shared by the timer interrupt (stepper.c) and the host
 * unit tests: a 16-bit phase accumulator advanced every tick by the velocity, and a
 * trapezoid velocity update run for one axis per tick (round robin). */
#ifndef ROBOTD_RAMP_H
#define ROBOTD_RAMP_H
#include <stdint.h>

enum ramp_mode { RAMP_ACCEL, RAMP_CRUISE, RAMP_DECEL };

/* Velocities are fractions of one step per tick, scaled by 2^32 (vel >> 16 is added
 * to the 16-bit phase; a carry is a step). */
struct axis {
    uint16_t remaining;     /* steps still to make; 0 = idle */
    uint16_t total;
    uint16_t ramp;          /* steps made while accelerating */
    uint16_t phase;
    uint16_t v16;           /* vel >> 16, what the tick adds */
    uint8_t mode;
    uint32_t vel, vmax, dv, vmin;
};

/* One tick of an axis with remaining > 0; returns 1 when it steps. */
static inline __attribute__((always_inline)) uint8_t axis_tick(struct axis *a)
{
    uint16_t ph = (uint16_t)(a->phase + a->v16);
    uint8_t step = ph < a->phase;
    a->phase = ph;
    if (step)
        a->remaining--;
    return step;
}

/* Velocity update, every AXES ticks per axis: accelerate until vmax, decelerate once
 * the steps left are no more than the steps the acceleration took. */
static inline void axis_update(struct axis *a)
{
    uint16_t taken = (uint16_t)(a->total - a->remaining);
    if (a->mode == RAMP_ACCEL) {
        if (a->remaining <= taken) {
            a->mode = RAMP_DECEL;
        } else if (a->vel + a->dv >= a->vmax) {
            a->vel = a->vmax;
            a->mode = RAMP_CRUISE;
            a->ramp = taken;
        } else {
            a->vel += a->dv;
        }
    } else if (a->mode == RAMP_CRUISE && a->remaining <= a->ramp) {
        a->mode = RAMP_DECEL;
    }
    if (a->mode == RAMP_DECEL)
        a->vel = a->vel > a->vmin + a->dv ? a->vel - a->dv : a->vmin;
    a->v16 = (uint16_t)(a->vel >> 16);
}
#endif
