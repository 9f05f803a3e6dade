/* Pin maps of the six stepper drivers, one X-macro per board.
 *
 * Each entry: name, STEP port letter, bit, DIR port letter, bit, EN port letter, bit.
 * The firmware pastes the letters into PORTx / DDRx; a simulation harness may
 * include this header to find the same pins. The Arduino Mega pin numbers in
 * the comments were checked against the ATmega2560 port map.
 * EN is active low on A4988 / DRV8825 / TMC2208 drivers.
 */
#ifndef ROBOTD_PINS_H
#define ROBOTD_PINS_H

/* name, STEP port letter, bit, DIR port letter, bit, EN port letter, bit */
#if defined(BOARD_RAMPS)
#define ROBOTD_AXES(X) \
    X(U, F, 0, F, 1, D, 7)  /* RAMPS X:  STEP D54 DIR D55 EN D38 */ \
    X(R, F, 6, F, 7, F, 2)  /* RAMPS Y:  STEP D60 DIR D61 EN D56 */ \
    X(F, L, 3, L, 1, K, 0)  /* RAMPS Z:  STEP D46 DIR D48 EN D62 */ \
    X(D, A, 4, A, 6, A, 2)  /* RAMPS E0: STEP D26 DIR D28 EN D24 */ \
    X(L, C, 1, C, 3, C, 7)  /* RAMPS E1: STEP D36 DIR D34 EN D30 */ \
    X(B, G, 1, L, 7, L, 5)  /* AUX-2:    STEP D40 DIR D42 EN D44 */
#elif defined(BOARD_HEADER)
#define ROBOTD_AXES(X) \
    X(U, A, 0, C, 0, L, 0)  /* STEP D22 DIR D37 EN D49 */ \
    X(R, A, 1, C, 1, L, 1)  /* STEP D23 DIR D36 EN D48 */ \
    X(F, A, 2, C, 2, L, 2)  /* STEP D24 DIR D35 EN D47 */ \
    X(D, A, 3, C, 3, L, 3)  /* STEP D25 DIR D34 EN D46 */ \
    X(L, A, 4, C, 4, L, 4)  /* STEP D26 DIR D33 EN D45 */ \
    X(B, A, 5, C, 5, L, 5)  /* STEP D27 DIR D32 EN D44 */
#else
#error "BOARD_RAMPS or BOARD_HEADER"
#endif

#endif
