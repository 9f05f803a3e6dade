/* The pin map of the stock firmware builds (Marlin 2.1 and grbl-Mega-5X for six steppers on a RAMPS 1.4,
 * shared/stock-firmware/README.md): X Y Z on their sockets, A B on E0 E1, C on AUX-3. EN is active low. */
#include "harness.h"

const struct axis_pins stock_pins[AXES] = {
    {"X", {'F', 0}, {'F', 1}, {'D', 7}},  /* STEP D54 DIR D55 EN D38 */
    {"Y", {'F', 6}, {'F', 7}, {'F', 2}},  /* STEP D60 DIR D61 EN D56 */
    {"Z", {'L', 3}, {'L', 1}, {'K', 0}},  /* STEP D46 DIR D48 EN D62 */
    {"A", {'A', 4}, {'A', 6}, {'A', 2}},  /* E0: STEP D26 DIR D28 EN D24 */
    {"B", {'C', 1}, {'C', 3}, {'C', 7}},  /* E1: STEP D36 DIR D34 EN D30 */
    {"C", {'L', 0}, {'B', 2}, {'B', 0}},  /* AUX-3: STEP D49 DIR D51 EN D53 */
};
