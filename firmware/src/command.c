/* Argument checks of the queued commands, one function per verb. */
#include <string.h>
#include "command.h"
#include "config.h"
#include "pins.h"
#include "queue.h"

#define NAME_STR(n, sp, sb, dp, db, ep, eb) #n
const char motor_names[] = ROBOTD_AXES(NAME_STR);

static PGM_P err;                       /* reason of the last refusal */

static enum cmd_result bad(PGM_P why)
{
    err = why;
    return CMD_BADARG;
}

uint8_t parse_num(const char *s, int32_t *out)
{
    uint8_t neg = 0, digits = 0;
    int32_t v = 0;
    if (*s == '+' || *s == '-')
        neg = (*s++ == '-');
    for (; *s >= '0' && *s <= '9'; s++, digits++)
        v = v * 10 + (*s - '0');
    if (*s || digits == 0 || digits > 5)
        return 0;
    *out = neg ? -v : v;
    return 1;
}

int8_t motor_index(const char *s)
{
    if (!s[0] || s[1])
        return -1;
    const char *p = strchr(motor_names, s[0]);
    return p ? (int8_t)(p - motor_names) : -1;
}

static uint8_t quarter_ok(int32_t q)
{
    return q == 1 || q == -1 || q == 2 || q == -2;
}

/* motor + quarter turns as two tokens */
static uint8_t turn_args(const char *m, const char *qs, uint8_t *motor, int8_t *q)
{
    int32_t v;
    int8_t i = motor_index(m);
    if (i < 0)
        return bad(PSTR("unknown motor (this rig has U,R,F,D,L,B)")), 0;
    if (!parse_num(qs, &v) || !quarter_ok(v))
        return bad(PSTR("quarter turns: use one of -2 -1 1 2")), 0;
    *motor = (uint8_t)i;
    *q = (int8_t)v;
    return 1;
}

static enum cmd_result turn_cmd(uint8_t argc, char **argv, struct step *s)
{
    if (argc != 2)
        return bad(PSTR("TURN takes: motion id, motor, quarter turns"));
    if (!turn_args(argv[0], argv[1], &s->u.turn.motor[0], &s->u.turn.q[0]))
        return CMD_BADARG;
    return CMD_OK;
}

static enum cmd_result pair_cmd(uint8_t argc, char **argv, struct step *s)
{
    if (argc != 4)
        return bad(PSTR("PAIR takes: motion id, motor, quarter turns, motor, quarter turns"));
    if (!turn_args(argv[0], argv[1], &s->u.turn.motor[0], &s->u.turn.q[0])
        || !turn_args(argv[2], argv[3], &s->u.turn.motor[1], &s->u.turn.q[1]))
        return CMD_BADARG;
    if (!opposite(s->u.turn.motor[0], s->u.turn.motor[1]))
        return bad(PSTR("motors are not an opposite pair"));
    return CMD_OK;
}

static enum cmd_result list_cmd(uint8_t argc, char **argv, struct step *s)
{
    uint8_t mask = 0;
    for (uint8_t k = 0; k < argc; k++) {
        int8_t i = motor_index(argv[k]);
        if (i < 0 || (mask & (1 << i)))
            return bad(PSTR("motor list: name each of U,R,F,D,L,B at most once"));
        mask |= (uint8_t)(1 << i);
    }
    s->mask = mask ? mask : ALL_AXES;
    return CMD_OK;
}

static enum cmd_result speed_cmd(uint8_t argc, char **argv, struct step *s)
{
    int32_t ms;
    if (argc != 1 || !parse_num(argv[0], &ms) || ms < 20 || ms > 10000)
        return bad(PSTR("SPEED takes one quarter-turn time in ms, 20..10000"));
    s->u.ms = (uint16_t)ms;
    return CMD_OK;
}

/* one key=value of MOTOR; returns the key's bit, 0 if bad. overlap= (version 3): the steps
 * before aligned at which a turn of an adjacent face may start. */
static uint8_t motor_key(const char *tok, struct step *s)
{
    static const char keys[] = "steps=\0rate=\0accel=\0dir=\0overlap=";
    static const int32_t lo[] = {1, 1, 1, -1, 0}, hi[] = {20000, RATE_MAX, 65535, 1, 20000};
    const char *k = keys;
    for (uint8_t i = 0; i < 5; i++, k += strlen(k) + 1) {
        uint8_t n = (uint8_t)strlen(k);
        int32_t v;
        if (strncmp(tok, k, n))
            continue;
        if (!parse_num(tok + n, &v) || v < lo[i] || v > hi[i] || (i == 3 && v == 0))
            return 0;
        if (i == 0) s->u.motor.steps = (uint16_t)v;
        if (i == 1) s->u.motor.rate = (uint16_t)v;
        if (i == 2) s->u.motor.accel = (uint16_t)v;
        if (i == 3) s->u.motor.dir = (int8_t)v;
        if (i == 4) s->u.motor.overlap = (uint16_t)v;
        return (uint8_t)(1 << i);
    }
    return 0;
}

#define MOTOR_REQUIRED 0x0F             /* steps rate accel dir; overlap optional (version 3) */
#define MOTOR_OVERLAP 0x10

static enum cmd_result motor_cmd(uint8_t argc, char **argv, struct step *s, uint8_t proto)
{
    uint8_t most = proto >= 3 ? 6 : 5;
    if (argc < 5 || argc > most)
        return bad(proto >= 3 ? PSTR("MOTOR takes: motion id, motor, steps= rate= accel= dir= [overlap=]")
                              : PSTR("MOTOR takes: motion id, motor, steps= rate= accel= dir="));
    int8_t i = motor_index(argv[0]);
    if (i < 0)
        return bad(PSTR("unknown motor (this rig has U,R,F,D,L,B)"));
    s->mask = (uint8_t)i;
    s->u.motor.overlap = 0;
    uint8_t seen = 0;
    for (uint8_t k = 1; k < argc; k++) {
        uint8_t bit = motor_key(argv[k], s);
        if (!bit || (seen & bit) || (bit == MOTOR_OVERLAP && proto < 3))
            return bad(PSTR("MOTOR: steps=1..20000 rate=1..max accel=1..65535 dir=1|-1, each once"));
        seen |= bit;
    }
    if ((seen & MOTOR_REQUIRED) != MOTOR_REQUIRED)
        return bad(PSTR("MOTOR: steps=1..20000 rate=1..max accel=1..65535 dir=1|-1, each once"));
    if (s->u.motor.overlap > s->u.motor.steps)
        return bad(PSTR("MOTOR: overlap= at most steps="));
    return CMD_OK;
}

static enum cmd_result jog_cmd(uint8_t argc, char **argv, struct step *s)
{
    uint8_t mask = 0;
    if (argc == 0 || argc % 2)
        return bad(PSTR("JOG takes: motion id, then motor and steps pairs"));
    memset(s->u.jog, 0, sizeof s->u.jog);
    for (uint8_t k = 0; k < argc; k += 2) {
        int8_t i = motor_index(argv[k]);
        int32_t v;
        if (i < 0 || (mask & (1 << i)))
            return bad(PSTR("JOG: unknown or repeated motor"));
        if (!parse_num(argv[k + 1], &v) || v == 0 || v < -32767 || v > 32767)
            return bad(PSTR("JOG: steps -32767..32767, not 0"));
        mask |= (uint8_t)(1 << i);
        s->u.jog[i] = (int16_t)v;
    }
    s->mask = mask;
    return CMD_OK;
}

/* A plan turn: <motor><q> or <motor><q><motor><q>. Fills s (TURN or PAIR). */
static uint8_t plan_turn(const char *t, struct step *s)
{
    char name[2][8], num[2][8];
    uint8_t n = 0;
    while (*t && n < 2) {
        uint8_t a = 0, b = 0;
        while (((*t >= 'A' && *t <= 'Z') || (*t >= 'a' && *t <= 'z')) && a < 7)
            name[n][a++] = *t++;
        if (*t == '+' || *t == '-')
            num[n][b++] = *t++;
        while (*t >= '0' && *t <= '9' && b < 7)
            num[n][b++] = *t++;
        name[n][a] = num[n][b] = '\0';
        if (a == 0 || b == 0)
            return 0;
        if (!turn_args(name[n], num[n], &s->u.turn.motor[n], &s->u.turn.q[n]))
            return 0;
        n++;
    }
    if (*t || n == 0)
        return 0;
    s->verb = n == 2 ? V_PAIR : V_TURN;
    return n == 1 || opposite(s->u.turn.motor[0], s->u.turn.motor[1]);
}

static uint16_t next_mid(uint16_t mid) { return mid == 65535 ? 1 : (uint16_t)(mid + 1); }

static enum cmd_result plan_cmd(uint8_t argc, char **argv, uint16_t mid, uint8_t busy)
{
    struct step s;
    if (argc == 0 || argc > PLAN_MAX)
        return bad(PSTR("PLAN takes: motion id, 1..48 turns"));
    for (uint8_t k = 0; k < argc; k++)
        if (!plan_turn(argv[k], &s))
            return bad(PSTR("PLAN: bad turn (use e.g. R1 U-1 F2 U1D-1)"));
    if (busy + argc > QUEUE_CAP) {
        err = PSTR("plan does not fit the free queue");
        return CMD_QFULL;
    }
    for (uint8_t k = 0; k < argc; k++, mid = next_mid(mid)) {
        struct step *q = queue_slot();
        plan_turn(argv[k], q);
        q->mid = mid;
        queue_commit();
    }
    return CMD_OK;
}

static const char verbs[] = "TURN\0PAIR\0HOME\0ENABLE\0DISABLE\0SPEED\0MOTOR\0JOG\0PLAN";
#define VERB_PLAN 8

static int8_t verb_index(const char *v, uint8_t proto)
{
    const char *k = verbs;
    for (uint8_t i = 0; i <= VERB_PLAN; i++, k += strlen(k) + 1)
        if (!strcmp(v, k))
            return (i >= V_MOTOR && proto < 2) ? -1 : (int8_t)i;
    return -1;
}

static enum cmd_result args_for(uint8_t verb, uint8_t argc, char **argv, struct step *s, uint8_t proto)
{
    switch (verb) {
    case V_TURN: return turn_cmd(argc, argv, s);
    case V_PAIR: return pair_cmd(argc, argv, s);
    case V_SPEED: return speed_cmd(argc, argv, s);
    case V_MOTOR: return motor_cmd(argc, argv, s, proto);
    case V_JOG: return jog_cmd(argc, argv, s);
    default: return list_cmd(argc, argv, s);        /* HOME ENABLE DISABLE */
    }
}

enum cmd_result command_queue(uint8_t argc, char **argv, uint8_t proto, uint8_t busy, PGM_P *why)
{
    int8_t verb = verb_index(argv[0], proto);
    int32_t mid;
    struct step s;
    enum cmd_result r;
    if (verb < 0) {
        *why = PSTR("unknown command");
        return CMD_BADCMD;
    }
    if (argc < 2 || !parse_num(argv[1], &mid) || mid < 1 || mid > 65535) {
        *why = PSTR("motion id: use 1..65535");
        return CMD_BADARG;
    }
    if (verb == VERB_PLAN)
        r = plan_cmd((uint8_t)(argc - 2), argv + 2, (uint16_t)mid, busy);
    else if ((r = args_for((uint8_t)verb, (uint8_t)(argc - 2), argv + 2, &s, proto)) == CMD_OK) {
        struct step *q = busy >= QUEUE_CAP ? 0 : queue_slot();
        if (!q) {
            err = PSTR("queue full");
            r = CMD_QFULL;
        } else {
            s.verb = (uint8_t)verb;
            s.mid = (uint16_t)mid;
            *q = s;
            queue_commit();
        }
    }
    *why = err;
    return r;
}
