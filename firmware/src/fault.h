/* Error codes and the latched fault (docs/protocol.md section 10). */
#ifndef ROBOTD_FAULT_H
#define ROBOTD_FAULT_H
#include <stdint.h>

enum code {
    C_NONE, C_CRC, C_FRAME, C_LONG, C_SEQ, C_NOSESSION, C_BADCMD, C_BADARG, C_QFULL,
    C_FAULTED, C_STALL, C_LIMIT, C_DISABLED, C_DRIVER, C_ESTOP, C_HOSTLOST
};

#define NO_MOTOR 0xFF
#define NO_SEQ (-1L)            /* sequence number 0 is a valid one */

void out_code(uint8_t code);            /* append a code's name to the frame being built */
/* Stop the motors, empty the queue, latch the first fault and send FAULT (once, or again
 * when something was stopped). mid 0: none; seq NO_SEQ: none. */
void fault_latch(uint8_t code, uint16_t mid, int32_t seq, uint8_t motor);
uint8_t fault_code(void);               /* C_NONE if none latched */
void fault_clear(void);
void out_fault_fields(void);            /* " fault=CODE[ fmid=M][ fseq=N]" */
#endif
