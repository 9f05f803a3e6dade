/* Line assembly and frame validation (docs/protocol.md section 2). */
#include "frame.h"
#include "crc16.h"

uint8_t line_feed(struct line *l, char c)
{
    if (c == '\n')
        return 1;
    if (l->overflow)
        return 0;
    if (l->len >= FRAME_MAX - 1) {      /* with its LF the line would exceed the limit */
        l->overflow = 1;
        l->len = 0;
        return 0;
    }
    l->buf[l->len++] = c;
    return 0;
}

enum frame_result line_check(struct line *l, uint8_t *body_len)
{
    enum frame_result r = l->overflow ? FRAME_LONG : frame_check(l->buf, l->len, body_len);
    l->len = 0;
    l->overflow = 0;
    return r;
}

static int8_t hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return (int8_t)(c - '0');
    if (c >= 'A' && c <= 'F')
        return (int8_t)(c - 'A' + 10);
    if (c >= 'a' && c <= 'f')
        return (int8_t)(c - 'a' + 10);
    return -1;
}

static uint8_t printable(const char *s, uint8_t len)
{
    for (uint8_t i = 0; i < len; i++)
        if ((uint8_t)s[i] < 0x20 || (uint8_t)s[i] > 0x7E)
            return 0;
    return 1;
}

/* Body rules: not empty, no '*', single spaces, none leading or trailing. */
static uint8_t body_ok(const char *s, uint8_t len)
{
    if (len == 0 || s[0] == ' ' || s[len - 1] == ' ')
        return 0;
    for (uint8_t i = 0; i < len; i++) {
        if (s[i] == '*')
            return 0;
        if (s[i] == ' ' && s[i + 1] == ' ')
            return 0;
    }
    return 1;
}

static int32_t crc_field(const char *s)
{
    uint16_t v = 0;
    for (uint8_t i = 0; i < 4; i++) {
        int8_t h = hex_value(s[i]);
        if (h < 0)
            return -1;
        v = (uint16_t)(v << 4 | (uint8_t)h);
    }
    return v;
}

enum frame_result frame_check(char *s, uint8_t len, uint8_t *body_len)
{
    if (len && s[len - 1] == '\r')
        len--;
    if (len == 0 || s[0] == '#')
        return FRAME_IGNORE;
    if (!printable(s, len))
        return FRAME_BAD;
    uint8_t star = len;
    while (star > 0 && s[star - 1] != '*')
        star--;
    if (star == 0)                      /* no '*' */
        return FRAME_BAD;
    star--;                             /* index of the last '*' */
    if (len - star - 1 != 4)
        return FRAME_BAD;
    int32_t crc = crc_field(s + star + 1);
    if (crc < 0 || !body_ok(s, star))
        return FRAME_BAD;
    if ((uint16_t)crc != crc16(s, star))
        return FRAME_BADCRC;
    s[star] = '\0';
    *body_len = star;
    return FRAME_OK;
}
