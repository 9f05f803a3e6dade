/* Device side of the protocol, following firmware_interface/robotd/device.py. */
#include <string.h>
#include "protocol.h"
#include "boot_id.h"
#include "clock.h"
#include "command.h"
#include "config.h"
#include "fault.h"
#include "frame.h"
#include "motion.h"
#include "out.h"
#include "stepper.h"

#define MAX_TOKENS 100                  /* a 200-byte body has fewer */

static struct line line;
static uint8_t session_open, proto;
static char session[9];
static uint16_t expected;
static uint8_t nak_sent;
static char last_reply[REPLY_MAX + 1];
static uint32_t last_host_ms, next_hb_ms;

/* ------------------------------------------------------------ replies */

static void send_last_reply(void)
{
    out_begin();
    out_str(last_reply);
    out_end();
}

static void keep_and_send(void)         /* the body being built becomes last_reply */
{
    uint8_t n;
    const char *body = out_body(&n);
    if (n > REPLY_MAX)
        n = REPLY_MAX;
    memcpy(last_reply, body, n);
    last_reply[n] = '\0';
    out_end();
}

static void nak(uint8_t code)
{
    if (!session_open || nak_sent)
        return;
    nak_sent = 1;
    out_begin();
    out_pstr(PSTR("NAK "));
    out_uint(expected);
    out_char(' ');
    out_code(code);
    out_end();
}

static void rej_begin(uint16_t seq, uint8_t code)
{
    out_begin();
    out_pstr(PSTR("REJ "));
    out_uint(seq);
    out_char(' ');
    out_code(code);
}

static PGM_P state_name(void)
{
    if (!session_open)
        return PSTR("IDLE");
    if (fault_code() != C_NONE)
        return PSTR("FAULT");
    return motion_busy() ? PSTR("RUN") : PSTR("READY");
}

/* boot= state= rx= done= q= fault= [fmid=] [fseq=] */
static void out_report(void)
{
    out_pstr(PSTR(" boot="));
    out_hex32(boot_id());
    out_pstr(PSTR(" state="));
    out_pstr(state_name());
    out_key_uint(PSTR("rx"), session_open ? (uint16_t)(expected - 1) : 0);
    out_key_uint(PSTR("done"), motion_done());
    out_key_uint(PSTR("q"), motion_busy());
    out_fault_fields();
}

static void out_motor_list(uint8_t mask, char sep)
{
    uint8_t first = 1;
    for (uint8_t m = 0; motor_names[m]; m++) {
        if (!(mask & (1 << m)))
            continue;
        if (!first)
            out_char(sep);
        out_char(motor_names[m]);
        first = 0;
    }
    if (first)
        out_char('-');
}

static void status_reply(uint16_t token)
{
    out_begin();
    out_pstr(PSTR("STATUS "));
    out_uint(token);
    out_report();
    out_pstr(PSTR(" en="));
    out_motor_list(motion_enabled(), ',');
    out_key_uint(PSTR("speed"), motion_speed());
    out_end();
}

static void estop(uint16_t token)
{
    motion_halt();                      /* pulses stop and drivers go limp first */
    out_begin();
    out_pstr(PSTR("ESTOP "));
    out_uint(token);
    out_key_uint(PSTR("done"), motion_done());
    out_end();
    fault_latch(C_ESTOP, 0, NO_SEQ, NO_MOTOR);
}

/* ------------------------------------------------------------ HELLO */

static void hello_reply(const char *sess, uint8_t version, uint8_t full)
{
    out_begin();
    out_pstr(PSTR("HELLO session="));
    out_str(sess);
    out_key_uint(PSTR("proto"), version);
    out_pstr(PSTR(" fw=" FW_NAME));
    if (full) {
        out_pstr(PSTR(" rig=" RIG_NAME " motors="));
        out_motor_list(0x3F, ',');
        out_pstr(PSTR(" boot="));
        out_hex32(boot_id());
        out_key_uint(PSTR("window"), WINDOW);
        out_key_uint(PSTR("queue"), QUEUE_CAP);
        out_key_uint(PSTR("hb"), HB_MS);
        out_key_uint(PSTR("watchdog"), WATCHDOG_MS);
        out_pstr(PSTR(" fault="));
        out_code(fault_code());
        if (version >= 2) {
            out_key_uint(PSTR("plan"), PLAN_MAX);
            out_key_uint(PSTR("rate"), RATE_MAX);
        }
    }
    out_end();
}

static uint8_t hex8(const char *s)
{
    uint8_t n = 0;
    for (; s[n]; n++)
        if (n >= 8 || !((s[n] >= '0' && s[n] <= '9') || ((s[n] | 0x20) >= 'a' && (s[n] | 0x20) <= 'f')))
            return 0;
    return n == 8;
}

static uint8_t u16_field(const char *s, uint16_t *out)
{
    int32_t v;
    if (!parse_num(s, &v) || v < 0 || v > 65535)
        return 0;
    *out = (uint16_t)v;
    return 1;
}

/* HELLO proto= session= seq=: required, any order, unknown keys ignored. */
static uint8_t hello_fields(uint8_t argc, char **argv, uint16_t *ver, char *sess, uint16_t *seq)
{
    uint8_t seen = 0;
    for (uint8_t k = 1; k < argc; k++) {
        char *eq = strchr(argv[k], '=');
        if (!eq || eq == argv[k])
            return 0;
        *eq = '\0';
        const char *key = argv[k], *val = eq + 1;
        uint8_t bit = !strcmp(key, "proto") ? 1 : !strcmp(key, "session") ? 2 : !strcmp(key, "seq") ? 4 : 0;
        if (bit & seen)
            return 0;
        seen |= bit;
        if ((bit == 1 && !u16_field(val, ver)) || (bit == 4 && !u16_field(val, seq))
            || (bit == 2 && !hex8(val)))
            return 0;
        if (bit == 2)
            for (uint8_t i = 0; i < 9; i++)
                sess[i] = (char)((val[i] >= 'a' && val[i] <= 'f') ? val[i] - 32 : val[i]);
        /* a repeated unknown key is not caught: harmless */
    }
    return seen == 7;
}

static void hello(uint8_t argc, char **argv)
{
    uint16_t ver, seq;
    char sess[9];
    if (!hello_fields(argc, argv, &ver, sess, &seq)) {
        nak(C_FRAME);
        return;
    }
    last_host_ms = clock_ms();
    if (ver < 1 || ver > PROTO_MAX) {
        hello_reply(sess, PROTO_MAX, 0);        /* no session opened */
        return;
    }
    if (!session_open || strcmp(sess, session) || ver != proto) {
        motion_stop();
        session_open = 1;
        proto = (uint8_t)ver;
        memcpy(session, sess, sizeof session);
        expected = seq;
        nak_sent = 0;
        motion_new_session(proto);
        out_begin();
        out_pstr(PSTR("ACK "));
        out_uint((uint16_t)(seq - 1));
        uint8_t n;
        strcpy(last_reply, out_body(&n));
    }
    hello_reply(sess, proto, 1);
}

/* ------------------------------------------------------------ sequenced commands */

static void accept(uint16_t seq, uint8_t argc, char **argv)
{
    PGM_P why = 0;
    uint8_t code = C_NONE;
    if (!strcmp(argv[1], "CLEAR") && argc == 2) {
        fault_clear();
    } else if (fault_code() != C_NONE) {
        rej_begin(seq, C_FAULTED);
        out_char(' ');
        out_code(fault_code());
        out_pstr(PSTR(" latched"));
        keep_and_send();
        return;
    } else {
        enum cmd_result r = command_queue((uint8_t)(argc - 1), argv + 1, proto, motion_busy(), &why);
        code = r == CMD_BADCMD ? C_BADCMD : r == CMD_BADARG ? C_BADARG : r == CMD_QFULL ? C_QFULL : C_NONE;
    }
    if (code == C_NONE) {
        out_begin();
        out_pstr(PSTR("ACK "));
        out_uint(seq);
        keep_and_send();
        return;
    }
    rej_begin(seq, code);
    if (why) {
        out_char(' ');
        out_pstr(why);
    }
    keep_and_send();
    fault_latch(code, 0, seq, NO_MOTOR);
}

static void sequenced(uint8_t argc, char **argv)
{
    uint16_t seq;
    if (argc < 2 || !u16_field(argv[0], &seq)) {
        nak(C_FRAME);
        return;
    }
    last_host_ms = clock_ms();
    if (!session_open) {
        rej_begin(seq, C_NOSESSION);
        out_end();
        return;
    }
    uint16_t d = (uint16_t)(seq - expected);
    if (d == 0) {
        expected++;
        nak_sent = 0;
        accept(seq, argc, argv);
    } else if (d < 32768) {
        nak(C_SEQ);
    } else {
        send_last_reply();
    }
}

/* ------------------------------------------------------------ frames */

static uint8_t tokenize(char *body, char **argv)
{
    uint8_t argc = 0;
    argv[argc++] = body;
    for (char *p = body; *p && argc < MAX_TOKENS; p++)
        if (*p == ' ') {
            *p = '\0';
            argv[argc++] = p + 1;
        }
    return argc;
}

/* PING, STATUS, ESTOP: exactly one 16-bit token. */
static uint8_t token_frame(uint8_t argc, char **argv, uint16_t *token)
{
    if (argc != 2 || !u16_field(argv[1], token)) {
        nak(C_FRAME);
        return 0;
    }
    last_host_ms = clock_ms();
    return 1;
}

static void handle_frame(char *body)
{
    char *argv[MAX_TOKENS];
    uint8_t argc = tokenize(body, argv);
    uint16_t token;
    if (argv[0][0] >= '0' && argv[0][0] <= '9')
        sequenced(argc, argv);
    else if (!strcmp(argv[0], "ESTOP")) {
        if (token_frame(argc, argv, &token))
            estop(token);
    } else if (!strcmp(argv[0], "STATUS")) {
        if (token_frame(argc, argv, &token))
            status_reply(token);
    } else if (!strcmp(argv[0], "PING"))
        token_frame(argc, argv, &token);
    else if (!strcmp(argv[0], "HELLO"))
        hello(argc, argv);
    else
        nak(C_FRAME);
}

void protocol_byte(char c)
{
    uint8_t body_len;
    if (!line_feed(&line, c))
        return;
    /* the receive interrupt held the pulses for this line (uart.c): judge it, then release */
    uint8_t held = !line.overflow && line.len >= 6 && !memcmp(line.buf, "ESTOP ", 6);
    switch (line_check(&line, &body_len)) {
    case FRAME_OK: handle_frame(line.buf); break;
    case FRAME_BAD: nak(C_FRAME); break;
    case FRAME_BADCRC: nak(C_CRC); break;
    case FRAME_LONG: nak(C_LONG); break;
    default: break;
    }
    if (held)
        stepper_release();
}

/* ------------------------------------------------------------ time */

void protocol_boot(void)
{
    out_begin();
    out_pstr(PSTR("BOOT proto="));
    out_uint(PROTO_MAX);
    out_pstr(PSTR(" fw=" FW_NAME " boot="));
    out_hex32(boot_id());
    out_end();
    last_host_ms = next_hb_ms = clock_ms();
    next_hb_ms += HB_MS;
}

void protocol_poll(void)
{
    uint32_t now = clock_ms();
    if (session_open && motion_busy() && (int32_t)(now - last_host_ms) > WATCHDOG_MS) {
        motion_halt();
        fault_latch(C_HOSTLOST, 0, NO_SEQ, NO_MOTOR);
    }
    if ((int32_t)(now - next_hb_ms) >= 0) {
        out_begin();
        out_pstr(PSTR("HB"));
        out_report();
        out_end();
        next_hb_ms += HB_MS;
        if ((int32_t)(now - next_hb_ms) >= 0)   /* fell behind: no burst */
            next_hb_ms = now + HB_MS;
    }
}
