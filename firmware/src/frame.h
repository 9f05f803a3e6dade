/* Lines in, frames out: line assembly with the 200-byte limit, and frame validation. */
#ifndef ROBOTD_FRAME_H
#define ROBOTD_FRAME_H
#include <stdint.h>

#define FRAME_MAX 200           /* bytes of one frame, line end included */

enum frame_result {
    FRAME_OK,                   /* a body with a matching CRC */
    FRAME_IGNORE,               /* empty line or a '#' line */
    FRAME_BAD,                  /* malformed: NAK FRAME */
    FRAME_BADCRC,               /* checksum mismatch: NAK CRC */
    FRAME_LONG                  /* line over the limit: NAK LONG */
};

struct line {
    char buf[FRAME_MAX];        /* at most FRAME_MAX - 1 bytes before the LF, plus a NUL */
    uint8_t len;
    uint8_t overflow;
};

/* Feed one byte. Returns 1 when a line ended (LF): then line_check() it. */
uint8_t line_feed(struct line *l, char c);

/* Check the line that just ended; on FRAME_OK the body is NUL-terminated in l->buf
 * and its length stored in *body_len. Resets the line for the next one. */
enum frame_result line_check(struct line *l, uint8_t *body_len);

/* Validate a line (no LF; a trailing CR is allowed) in place. */
enum frame_result frame_check(char *s, uint8_t len, uint8_t *body_len);
#endif
