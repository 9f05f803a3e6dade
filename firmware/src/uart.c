/* UART0 driver: interrupt-driven, non-blocking both ways. */
#include <avr/io.h>
#include <avr/interrupt.h>
#include <util/atomic.h>
#include "uart.h"

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

ISR(USART0_RX_vect)
{
    uint8_t c = UDR0;
    uint8_t next = (uint8_t)(rx_head + 1);
    if (next != rx_tail) {              /* full: the byte is lost, the frame fails its CRC */
        rx_buf[rx_head] = c;
        rx_head = next;
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
