/* Sessions, sequencing, replies, status, heartbeat and watchdog (docs/protocol.md). */
#ifndef ROBOTD_PROTOCOL_H
#define ROBOTD_PROTOCOL_H
#include <stdint.h>

void protocol_boot(void);                               /* send BOOT */
void protocol_byte(char c);                             /* receive path, one byte */
void protocol_poll(void);                               /* heartbeat and watchdog */
#endif
