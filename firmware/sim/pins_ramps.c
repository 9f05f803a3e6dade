#define BOARD_RAMPS
#include "harness.h"
#include "../src/pins.h"

#define AXIS_ENTRY(n, sp, sb, dp, db, ep, eb) {#n, {#sp[0], sb}, {#dp[0], db}, {#ep[0], eb}},
const struct axis_pins ramps_pins[AXES] = { ROBOTD_AXES(AXIS_ENTRY) };
