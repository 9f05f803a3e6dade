/* Trapezoid parameters of a move, computed when a step starts (float, not in the ISR). */
#ifndef ROBOTD_PROFILE_H
#define ROBOTD_PROFILE_H
#include <stdint.h>
#include "ramp.h"

/* Cruise rate in steps/s: the motor's top rate, lowered so that a quarter turn of
 * `steps` takes no less than speed_ms (0: no limit). accel in 100 steps/s^2. */
float profile_cruise(uint16_t steps, uint16_t rate, uint16_t accel, uint16_t speed_ms);

/* Fill the ramp fields of an axis for a move of n steps at cruise rate v. */
void profile_load(struct axis *a, uint16_t n, float v, uint16_t accel);
#endif
