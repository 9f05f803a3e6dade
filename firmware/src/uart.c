/* UART0 driver: interrupt-driven, non-blocking both ways. */
#include <avr/io.h>
#include <avr/interrupt.h>
#include <util/atomic.h>
#include "uart.h"
#include "frame.h"
#include "stepper.h"

#define BAUD 115200UL
#define RX_SIZE 256                     /* uint8_t indices wrap by themselves */
#define TX_SIZE 512

static volatile uint8_t rx_buf[RX_SIZE];
static volatile uint8_t rx_head, rx_tail;
static volatile uint8_t tx_buf[TX_SIZE];
static volatile uint16_t tx_head, tx_tail;
static uint16_t dropped;

void uart_init(void)
{
    UBRR0 = (uint16_t)((F_CPU + 4 * BAUD) / (8 * BAUD) - 1);   /* 16: 117647 baud, 2.1% */
    UCSR0A = _BV(U2X0);
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00);                        /* 8N1 */
    UCSR0B = _BV(RXEN0) | _BV(TXEN0) | _BV(RXCIE0);            /* TX stays enabled */
}

/* Follows the start of each line stored in the ring (the very bytes protocol.c will read):
 * the LF of a line that began "ESTOP " and is not too long to be a frame holds the step
 * pulses at once (stepper_hold); protocol.c judges the line and releases the hold. */
static void watch_for_estop(uint8_t c)
{
    static const char prefix[] = "ESTOP ";
    static uint8_t column, matched = 1;
    if (c == '\n') {
        if (matched && column >= sizeof prefix - 1 && column < FRAME_MAX)
            stepper_hold();
        column = 0;
        matched = 1;
        return;
    }
    if (column < sizeof prefix - 1 && c != (uint8_t)prefix[column])
        matched = 0;
    if (column < 255)
        column++;
}

ISR(USART0_RX_vect)
{
    uint8_t c = UDR0;
    uint8_t next = (uint8_t)(rx_head + 1);
    if (next != rx_tail) {              /* full: the byte is lost, the frame fails its CRC */
        rx_buf[rx_head] = c;
        rx_head = next;
        watch_for_estop(c);
    }
}

ISR(USART0_UDRE_vect)
{
    if (tx_tail == tx_head) {
        UCSR0B &= (uint8_t)~_BV(UDRIE0);
        return;
    }
    UDR0 = tx_buf[tx_tail];
    tx_tail = (tx_tail + 1) % TX_SIZE;
}

int16_t uart_getc(void)
{
    if (rx_tail == rx_head)
        return -1;
    uint8_t c = rx_buf[rx_tail];
    rx_tail = (uint8_t)(rx_tail + 1);
    return c;
}

static uint16_t tx_free(void)
{
    uint16_t tail;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) { tail = tx_tail; }
    return (uint16_t)((tail + TX_SIZE - tx_head - 1) % TX_SIZE);
}

uint8_t uart_send(const char *data, uint8_t len)
{
    if (tx_free() < len) {
        dropped++;
        return 0;
    }
    uint16_t h = tx_head;
    for (uint8_t i = 0; i < len; i++) {
        tx_buf[h] = (uint8_t)data[i];
        h = (h + 1) % TX_SIZE;
    }
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
        tx_head = h;
        UCSR0B |= _BV(UDRIE0);
    }
    return 1;
}

uint16_t uart_dropped(void) { return dropped; }
