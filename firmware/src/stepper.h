/* STEP/DIR/EN pins and the step timer (Timer1, TICK_HZ). */
#ifndef ROBOTD_STEPPER_H
#define ROBOTD_STEPPER_H
#include <stdint.h>
#include "ramp.h"

void stepper_init(void);                        /* pins out, drivers off (EN high), timer on */
void stepper_enable(uint8_t mask, uint8_t on);  /* EN low (on) or high for the axes in mask */
/* Prepare an idle axis: direction pin and ramp. Moves when stepper_arm() names it. */
struct axis *stepper_prepare(uint8_t i, uint8_t dir_high);
/* Start the prepared axes in mask together from the step interrupt, at the first tick where every axis
 * that is moving has no more steps left than its gate (gate[i] for axis i; NO_GATE: no limit).
 * One set of axes is armed at a time. */
#define NO_GATE 0xFFFF
void stepper_arm(uint8_t mask, const uint16_t *gate);
uint8_t stepper_armed(void);                    /* axes armed and not started yet */
uint8_t stepper_busy(void);                     /* axes armed or moving, read at one instant */
uint8_t stepper_active(void);                   /* axes still moving */
void stepper_stop(void);                        /* stop every axis at once, no ramp; disarm */
/* Hold: no pulses while holds are pending, but moves are not ended (no DONE). The receive
 * interrupt places one for each line that starts "ESTOP ", the main loop releases it once it
 * has judged that line, so pulses stop the moment an emergency stop arrives. */
void stepper_hold(void);                        /* interrupt context */
void stepper_release(void);
#endif
