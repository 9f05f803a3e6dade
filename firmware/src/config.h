/* Fixed parameters of the firmware, announced in BOOT and HELLO. */
#ifndef ROBOTD_CONFIG_H
#define ROBOTD_CONFIG_H

#define FW_NAME      "robotd-avr/3.0"
#define RIG_NAME     "six-axis"
#define PROTO_MAX    3          /* highest protocol version spoken (1 to 3) */
#define WINDOW       8
#define QUEUE_CAP    64         /* steps queued or running */
#define HB_MS        100
#define WATCHDOG_MS  1000
#define PLAN_MAX     48         /* turns in one PLAN frame */

#define TICK_HZ      25000UL    /* step timer: at most one step per axis per tick */
#define RATE_MAX     20000      /* highest step rate of one axis, steps/s (HELLO rate=) */

#define DEF_STEPS    200        /* steps per quarter turn before any MOTOR */
#define DEF_RATE     4000       /* steps/s */
#define DEF_ACCEL    400        /* x100 steps/s^2 */

#define REPLY_MAX    128        /* stored last ACK/REJ body */

#endif
