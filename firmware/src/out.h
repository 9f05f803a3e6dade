/* Building outgoing frames: body pieces, then "*CRC\n", sent whole or not at all. */
#ifndef ROBOTD_OUT_H
#define ROBOTD_OUT_H
#include <stdint.h>
#include "pgm.h"

void out_begin(void);
void out_str(const char *s);            /* RAM string */
void out_pstr(PGM_P s);                 /* flash string */
void out_char(char c);
void out_uint(uint16_t v);
void out_int(int16_t v);
void out_hex32(uint32_t v);             /* 8 upper-case hex digits */
void out_key_uint(PGM_P key, uint16_t v);   /* " key=value" */
const char *out_body(uint8_t *len);     /* the body so far (NUL-terminated) */
void out_end(void);                     /* append the CRC and line end, send */
#endif
