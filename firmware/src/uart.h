/* UART0, 115200 8N1 (U2X). Receive: interrupt into a 256-byte ring. Transmit: a ring
 * drained by the data-register-empty interrupt. uart_send() queues a whole frame or,
 * when the ring has no room for all of it, drops it and returns 0: the main loop never
 * waits for the line. The protocol recovers a lost reply by its timers, a lost HB or
 * DONE by the next one. */
#ifndef ROBOTD_UART_H
#define ROBOTD_UART_H
#include <stdint.h>

void uart_init(void);
int16_t uart_getc(void);                        /* -1 when nothing received */
uint8_t uart_send(const char *data, uint8_t len);
uint16_t uart_dropped(void);                    /* frames dropped for a full ring */
#endif
