/* Outgoing frame assembly. Bodies are cut at the frame limit rather than overflow. */
#include "out.h"
#include "crc16.h"
#include "frame.h"
#include "uart.h"

#define BODY_MAX (FRAME_MAX - 6)        /* room for "*CRC\n" */

static char buf[FRAME_MAX + 1];
static uint8_t len;

void out_begin(void) { len = 0; buf[0] = '\0'; }

void out_char(char c)
{
    if (len < BODY_MAX) {
        buf[len++] = c;
        buf[len] = '\0';
    }
}

void out_str(const char *s)
{
    while (*s)
        out_char(*s++);
}

void out_pstr(PGM_P s)
{
    char c;
    while ((c = (char)pgm_read_byte(s++)))
        out_char(c);
}

void out_uint(uint16_t v)
{
    char d[6];
    uint8_t n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        out_char(d[--n]);
}

void out_int(int16_t v)
{
    if (v < 0) {
        out_char('-');
        out_uint((uint16_t)(-(int32_t)v));
    } else {
        out_uint((uint16_t)v);
    }
}

static char hex_digit(uint8_t v) { return (char)(v < 10 ? '0' + v : 'A' + v - 10); }

void out_hex32(uint32_t v)
{
    for (int8_t shift = 28; shift >= 0; shift -= 4)
        out_char(hex_digit((uint8_t)(v >> shift) & 0xF));
}

void out_key_uint(PGM_P key, uint16_t v)
{
    out_char(' ');
    out_pstr(key);
    out_char('=');
    out_uint(v);
}

const char *out_body(uint8_t *n)
{
    *n = len;
    return buf;
}

void out_end(void)
{
    uint16_t crc = crc16(buf, len);
    buf[len++] = '*';
    for (int8_t shift = 12; shift >= 0; shift -= 4)
        buf[len++] = hex_digit((uint8_t)(crc >> shift) & 0xF);
    buf[len++] = '\n';
    uart_send(buf, len);
    len = 0;
}
