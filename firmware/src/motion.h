/* Runs the queued steps in order: motor set-up, enabling, speed, turns and jogs. */
#ifndef ROBOTD_MOTION_H
#define ROBOTD_MOTION_H
#include <stdint.h>

void motion_init(void);                 /* motor defaults, drivers off */
void motion_poll(void);                 /* finish the running step, start the next ones */
uint8_t motion_stop(void);              /* stop at once, empty the queue; 1 if anything was busy */
void motion_drivers_off(void);          /* EN high on every driver */
/* ESTOP, HOSTLOST: stop the pulses and switch the drivers off at once; the queue is
 * emptied by the fault latch that follows. */
void motion_halt(void);
uint8_t motion_busy(void);              /* steps queued or running */
uint16_t motion_done(void);             /* last motion id done, 0: none */
void motion_new_session(uint8_t proto);  /* done count back to 0; turns overlap from version 3 */
uint8_t motion_enabled(void);           /* mask of energised drivers */
uint16_t motion_speed(void);            /* quarter-turn time, ms (0: no limit) */
#endif
