/* One queued step (a motion with its motion id). */
#ifndef ROBOTD_STEP_H
#define ROBOTD_STEP_H
#include <stdint.h>

#define AXES 6
#define ALL_AXES 0x3F

/* motor indices are in the order U R F D L B: opposite faces are three apart */
static inline uint8_t opposite(uint8_t a, uint8_t b) { return (uint8_t)((a + AXES / 2) % AXES) == b; }

enum verb { V_TURN, V_PAIR, V_HOME, V_ENABLE, V_DISABLE, V_SPEED, V_MOTOR, V_JOG };

struct step {
    uint8_t verb;
    uint8_t mask;                       /* HOME/ENABLE/DISABLE/JOG: motors; MOTOR: motor index */
    uint16_t mid;
    union {
        struct { uint8_t motor[2]; int8_t q[2]; } turn;    /* TURN: one, PAIR: two */
        uint16_t ms;                                        /* SPEED */
        struct { uint16_t steps, rate, accel, overlap; int8_t dir; } motor;   /* overlap: version 3 */
        int16_t jog[AXES];                                  /* JOG: steps per motor index */
    } u;
};
#endif
