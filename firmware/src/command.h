/* Sequenced commands: argument checks (firmware_interface/robotd/step_parser.py parse_step) and queueing. */
#ifndef ROBOTD_COMMAND_H
#define ROBOTD_COMMAND_H
#include <stdint.h>
#include "pgm.h"

enum cmd_result { CMD_OK, CMD_BADCMD, CMD_BADARG, CMD_QFULL };

extern const char motor_names[];        /* "URFDLB": one letter per axis, pin-map order */

/* argv[0] is the verb. proto: the session's protocol version (MOTOR, PLAN, JOG need 2).
 * busy: steps queued or running. On CMD_OK the step(s) are in the queue; otherwise
 * nothing was queued and *why says why (a flash string). */
enum cmd_result command_queue(uint8_t argc, char **argv, uint8_t proto, uint8_t busy, PGM_P *why);

/* Decimal, optionally signed, 1 to 5 digits, nothing after. Returns 1 if it is one. */
uint8_t parse_num(const char *s, int32_t *out);
/* Index of a one-letter motor name, or -1. */
int8_t motor_index(const char *s);
#endif
