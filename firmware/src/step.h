/* One queued step (a motion with its motion id). */
#ifndef ROBOTD_STEP_H
#define ROBOTD_STEP_H
#include <stdint.h>

#define AXES 6
#define ALL_AXES 0x3F

enum verb { V_TURN, V_PAIR, V_HOME, V_ENABLE, V_DISABLE, V_SPEED, V_MOTOR, V_JOG };

struct step {
    uint8_t verb;
    uint8_t mask;                       /* HOME/ENABLE/DISABLE/JOG: motors; MOTOR: motor index */
    uint16_t mid;
    union {
        struct { uint8_t motor[2]; int8_t q[2]; } turn;    /* TURN: one, PAIR: two */
        uint16_t ms;                                        /* SPEED */
        struct { uint16_t steps, rate, accel; int8_t dir; } motor;
        int16_t jog[AXES];                                  /* JOG: steps per motor index */
    } u;
};
#endif
