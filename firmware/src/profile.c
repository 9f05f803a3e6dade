/* Trapezoid set-up (docs/protocol.md section 16). */
#include <math.h>
#include "profile.h"
#include "config.h"
#include "step.h"

#define VEL_SCALE (4294967296.0f / (float)TICK_HZ)     /* steps/s -> 2^32 per tick */

float profile_cruise(uint16_t steps, uint16_t rate, uint16_t accel, uint16_t speed_ms)
{
    float v = rate;
    if (speed_ms) {
        float a = accel * 100.0f, t = speed_ms / 1000.0f;
        float disc = a * t * a * t - 4.0f * a * steps;
        if (disc >= 0) {
            float root = (a * t - sqrtf(disc)) / 2.0f;     /* smaller root of v^2 - ATv + AS */
            if (root < v)
                v = root;
        }
    }
    return v < 1.0f ? 1.0f : v;
}

void profile_load(struct axis *a, uint16_t n, float v, uint16_t accel)
{
    float acc = accel * 100.0f;
    float vmin = sqrtf(2.0f * acc);                     /* speed after one step from rest */
    if (vmin > v)
        vmin = v;
    a->vmax = (uint32_t)(v * VEL_SCALE);
    a->vmin = (uint32_t)(vmin * VEL_SCALE);
    a->dv = (uint32_t)(acc * AXES / (float)TICK_HZ * VEL_SCALE);
    if (a->dv == 0)
        a->dv = 1;
    a->total = a->remaining = n;
    a->ramp = 0;
    a->phase = 0;
    a->vel = 0;
    a->v16 = 0;
    a->mode = RAMP_ACCEL;
}
