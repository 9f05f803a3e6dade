/* Strings in flash on the AVR; plain strings when compiled for the host (unit tests). */
#ifndef ROBOTD_PGM_H
#define ROBOTD_PGM_H
#ifdef __AVR__
#include <avr/pgmspace.h>
#else
#define PSTR(s) (s)
#define PGM_P const char *
#define pgm_read_byte(p) (*(const unsigned char *)(p))
#endif
#endif
