// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sroce tracepoints, declared in trace.h, are created here, once.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
