// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the QP state machine sroce enforces: sroce_modify_qp()
 * accepts a transition only if ib_modify_qp_is_ok() does, so that table
 * is sroce's state table.  This suite holds it against the IBTA's (vol. 1,
 * 10.3 and 11.2.5: the QP state transitions and, per transport, the
 * attributes each transition requires and allows), written out again here
 * from the specification for the transports sroce creates: RC, UC and UD.
 *
 * What it proves, for RC, UC and UD:
 *  - every (current, next) pair of the seven states is allowed or refused
 *    as the IBTA's state diagram says;
 *  - an allowed transition passes with exactly its required attributes,
 *    and fails when any one of them is missing;
 *  - each attribute bit on top of the required ones passes if and only if
 *    the IBTA lists it as optional there (e.g. the ACK timeout changes in
 *    SQD, not in RTS); IB_QP_CUR_STATE only from RTR, RTS, SQD and SQE;
 *  - the common connection paths (perftest's, rdma_cm's) walk through.
 *
 * SQE is a UD and UC state: an RC QP goes from RTS to ERR on a send
 * error, so the SQE row is not asserted for RC.  RESET leads only to
 * RESET and INIT (ib_core, like the IBTA's diagram, has no RESET->ERR).
 */
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#define S(x)	IB_QPS_##x
#define A(x)	IB_QP_##x

enum { QT_RC, QT_UC, QT_UD, QT_N };

static const enum ib_qp_type qp_types[QT_N] = {
	[QT_RC] = IB_QPT_RC, [QT_UC] = IB_QPT_UC, [QT_UD] = IB_QPT_UD,
};

static const char *const qp_type_names[QT_N] = {
	[QT_RC] = "RC", [QT_UC] = "UC", [QT_UD] = "UD",
};

static const char *const qp_state_names[IB_QPS_ERR + 1] = {
	[IB_QPS_RESET] = "RESET", [IB_QPS_INIT] = "INIT", [IB_QPS_RTR] = "RTR",
	[IB_QPS_RTS] = "RTS", [IB_QPS_SQD] = "SQD", [IB_QPS_SQE] = "SQE",
	[IB_QPS_ERR] = "ERR",
};

struct qp_transition {
	enum ib_qp_state cur, next;
	u32 req[QT_N];		/* required attributes, per transport */
	u32 opt[QT_N];		/* optional attributes, per transport */
};

/* What RTR->RTS, RTS->RTS and SQD->RTS may change on the way. */
#define QP_OPT_TO_RTS {						\
	[QT_RC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |	\
		  A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),			\
	[QT_UC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |	\
		  A(PATH_MIG_STATE),					\
	[QT_UD] = A(CUR_STATE) | A(QKEY),				\
}

/* The IBTA's valid transitions; every pair not listed is invalid. */
static const struct qp_transition qp_ibta[] = {
	{ S(RESET), S(RESET) },
	{ S(RESET), S(INIT),
	  .req = {
		[QT_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
		[QT_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
		[QT_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
	  } },
	{ S(INIT), S(INIT),
	  .opt = {
		[QT_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
		[QT_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
		[QT_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
	  } },
	{ S(INIT), S(RTR),
	  .req = {
		[QT_RC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
			  A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER),
		[QT_UC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN),
	  },
	  .opt = {
		[QT_RC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
		[QT_UC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
		[QT_UD] = A(PKEY_INDEX) | A(QKEY),
	  } },
	{ S(RTR), S(RTS),
	  .req = {
		[QT_RC] = A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) |
			  A(SQ_PSN) | A(MAX_QP_RD_ATOMIC),
		[QT_UC] = A(SQ_PSN),
		[QT_UD] = A(SQ_PSN),
	  },
	  .opt = QP_OPT_TO_RTS },
	{ S(RTS), S(RTS),
	  .opt = QP_OPT_TO_RTS },
	{ S(RTS), S(SQD),
	  .opt = {
		[QT_RC] = A(EN_SQD_ASYNC_NOTIFY),
		[QT_UC] = A(EN_SQD_ASYNC_NOTIFY),
		[QT_UD] = A(EN_SQD_ASYNC_NOTIFY),
	  } },
	{ S(SQD), S(RTS),
	  .opt = QP_OPT_TO_RTS },
	{ S(SQD), S(SQD),
	  .opt = {
		[QT_RC] = A(PORT) | A(AV) | A(TIMEOUT) | A(RETRY_CNT) |
			  A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC) |
			  A(MAX_DEST_RD_ATOMIC) | A(ALT_PATH) |
			  A(ACCESS_FLAGS) | A(PKEY_INDEX) |
			  A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
		[QT_UC] = A(AV) | A(ALT_PATH) | A(ACCESS_FLAGS) |
			  A(PKEY_INDEX) | A(PATH_MIG_STATE),
		[QT_UD] = A(PKEY_INDEX) | A(QKEY),
	  } },
	{ S(SQE), S(RTS),
	  .opt = {
		[QT_UC] = A(CUR_STATE) | A(ACCESS_FLAGS),
		[QT_UD] = A(CUR_STATE) | A(QKEY),
	  } },
	/* from any state but RESET: to RESET and to ERR, nothing else */
	{ S(INIT), S(RESET) }, { S(INIT), S(ERR) },
	{ S(RTR), S(RESET) }, { S(RTR), S(ERR) },
	{ S(RTS), S(RESET) }, { S(RTS), S(ERR) },
	{ S(SQD), S(RESET) }, { S(SQD), S(ERR) },
	{ S(SQE), S(RESET) }, { S(SQE), S(ERR) },
	{ S(ERR), S(RESET) }, { S(ERR), S(ERR) },
};

/* The attribute bits a caller can set, IB_QP_STATE aside. */
static const u32 qp_attr_bits = (IB_QP_ATTR_STANDARD_BITS & ~IB_QP_STATE) |
				IB_QP_RATE_LIMIT;

static const struct qp_transition *qp_find(enum ib_qp_state cur,
					   enum ib_qp_state next)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(qp_ibta); i++)
		if (qp_ibta[i].cur == cur && qp_ibta[i].next == next)
			return &qp_ibta[i];
	return NULL;
}

static bool qp_ok(int t, enum ib_qp_state cur, enum ib_qp_state next, u32 mask)
{
	return ib_modify_qp_is_ok(cur, next, qp_types[t],
				  (enum ib_qp_attr_mask)mask);
}

/* Every pair of states, with the required attributes if it is valid. */
static void qp_state_transitions_test(struct kunit *test)
{
	enum ib_qp_state cur, next;
	int t, valid = 0;

	for (t = 0; t < QT_N; t++) {
		for (cur = IB_QPS_RESET; cur <= IB_QPS_ERR; cur++) {
			if (t == QT_RC && cur == IB_QPS_SQE)
				continue;
			for (next = IB_QPS_RESET; next <= IB_QPS_ERR; next++) {
				const struct qp_transition *tr = qp_find(cur, next);
				u32 mask = IB_QP_STATE | (tr ? tr->req[t] : 0);

				KUNIT_EXPECT_EQ_MSG(test, qp_ok(t, cur, next, mask),
						    !!tr, "%s %s->%s",
						    qp_type_names[t],
						    qp_state_names[cur],
						    qp_state_names[next]);
				valid += !!tr;
			}
		}
	}
	/* 22 valid pairs for UC and UD, 19 for RC (no SQE) */
	KUNIT_EXPECT_EQ(test, valid, 22 + 22 + 19);
}

/* Each required attribute is required: without it, no transition. */
static void qp_state_required_test(struct kunit *test)
{
	unsigned int i, n = 0;
	int t;

	for (i = 0; i < ARRAY_SIZE(qp_ibta); i++) {
		const struct qp_transition *tr = &qp_ibta[i];

		for (t = 0; t < QT_N; t++) {
			unsigned long req = tr->req[t];
			unsigned int bit;

			for_each_set_bit(bit, &req, BITS_PER_LONG) {
				u32 mask = IB_QP_STATE | (tr->req[t] & ~BIT(bit));

				KUNIT_EXPECT_FALSE_MSG(test,
						       qp_ok(t, tr->cur, tr->next, mask),
						       "%s %s->%s without bit %u",
						       qp_type_names[t],
						       qp_state_names[tr->cur],
						       qp_state_names[tr->next], bit);
				n++;
			}
		}
	}
	/* RC: 3 + 6 + 5, UC: 3 + 4 + 1, UD: 3 + 0 + 1 */
	KUNIT_EXPECT_EQ(test, n, 14 + 8 + 4);
}

/*
 * On top of the required attributes, each other bit alone passes exactly
 * when it is optional there; all the optional ones together pass too.
 */
static void qp_state_optional_test(struct kunit *test)
{
	unsigned long bits = qp_attr_bits;
	unsigned int i, bit;
	int t;

	for (i = 0; i < ARRAY_SIZE(qp_ibta); i++) {
		const struct qp_transition *tr = &qp_ibta[i];

		for (t = 0; t < QT_N; t++) {
			u32 base = IB_QP_STATE | tr->req[t];

			if (t == QT_RC && tr->cur == IB_QPS_SQE)
				continue;
			KUNIT_EXPECT_TRUE(test, qp_ok(t, tr->cur, tr->next,
						      base | tr->opt[t]));
			for_each_set_bit(bit, &bits, BITS_PER_LONG) {
				if (tr->req[t] & BIT(bit))
					continue;
				KUNIT_EXPECT_EQ_MSG(test,
						    qp_ok(t, tr->cur, tr->next,
							  base | BIT(bit)),
						    !!(tr->opt[t] & BIT(bit)),
						    "%s %s->%s with bit %u",
						    qp_type_names[t],
						    qp_state_names[tr->cur],
						    qp_state_names[tr->next], bit);
			}
		}
	}
}

/*
 * Known answers a driver gets wrong easily: the ACK timeout, retry counts
 * and path change only through SQD; UD has no path, no PSN checks of its
 * own beyond the SQ PSN; IB_QP_CUR_STATE is refused from RESET and INIT
 * even where it would otherwise be harmless; a mask without IB_QP_STATE
 * (attributes only) follows the current state's self-transition.
 */
static void qp_state_known_answers_test(struct kunit *test)
{
	u32 rts_rc = A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(SQ_PSN) |
		     A(MAX_QP_RD_ATOMIC);

	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(RTS), S(RTS), A(TIMEOUT)));
	KUNIT_EXPECT_TRUE(test, qp_ok(QT_RC, S(SQD), S(SQD), A(TIMEOUT)));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(RTS), S(RTS), A(AV)));
	KUNIT_EXPECT_TRUE(test, qp_ok(QT_RC, S(SQD), S(SQD), A(AV)));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_UD, S(SQD), S(SQD), A(AV)));
	KUNIT_EXPECT_TRUE(test, qp_ok(QT_RC, S(RTS), S(RTS),
				      A(MIN_RNR_TIMER)));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_UC, S(RTS), S(RTS),
				       A(MIN_RNR_TIMER)));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(RTS), S(RTS), A(SQ_PSN)));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(RTS), S(RTS), A(DEST_QPN)));

	/* CUR_STATE: only where the IBTA lists it */
	KUNIT_EXPECT_TRUE(test, qp_ok(QT_RC, S(RTR), S(RTS),
				      A(STATE) | A(CUR_STATE) | rts_rc));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(INIT), S(INIT),
				       A(STATE) | A(CUR_STATE)));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(RESET), S(RESET),
				       A(STATE) | A(CUR_STATE)));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(RTS), S(ERR),
				       A(STATE) | A(CUR_STATE)));
	KUNIT_EXPECT_TRUE(test, qp_ok(QT_UD, S(SQE), S(RTS),
				      A(STATE) | A(CUR_STATE)));

	/* nothing skips a state, nothing goes back but to RESET */
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(RESET), S(RTR), A(STATE)));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(INIT), S(RTS),
				       A(STATE) | rts_rc));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(RTS), S(RTR), A(STATE)));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(ERR), S(INIT), A(STATE)));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_UD, S(RTS), S(SQE), A(STATE)));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(SQD), S(ERR),
				       A(STATE) | A(TIMEOUT)));

	/* to RESET and ERR: no attribute at all */
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(RTS), S(RESET),
				       A(STATE) | A(QKEY)));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_UD, S(RTS), S(ERR),
				       A(STATE) | A(QKEY)));

	/* bits no transition takes */
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(RTS), S(RTS),
				       A(STATE) | IB_QP_RATE_LIMIT));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_RC, S(INIT), S(INIT),
				       A(STATE) | A(QKEY)));
	KUNIT_EXPECT_FALSE(test, qp_ok(QT_UD, S(INIT), S(INIT),
				       A(STATE) | A(ACCESS_FLAGS)));
}

/*
 * The masks real callers use, in order: perftest/ibv_rc_pingpong over
 * RC, rdma_cm's RC path (which adds the optional CUR_STATE-free bits it
 * knows), a UD QP, and the way back to RESET from ERR.
 */
static void qp_state_walk_test(struct kunit *test)
{
	static const struct {
		int t;
		enum ib_qp_state cur, next;
		u32 mask;
	} walk[] = {
		{ QT_RC, S(RESET), S(INIT),
		  A(STATE) | A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS) },
		{ QT_RC, S(INIT), S(RTR),
		  A(STATE) | A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
		  A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER) },
		{ QT_RC, S(RTR), S(RTS),
		  A(STATE) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) |
		  A(SQ_PSN) | A(MAX_QP_RD_ATOMIC) },
		{ QT_RC, S(RTS), S(SQD), A(STATE) | A(EN_SQD_ASYNC_NOTIFY) },
		{ QT_RC, S(SQD), S(SQD), A(TIMEOUT) | A(RETRY_CNT) },
		{ QT_RC, S(SQD), S(RTS), A(STATE) },
		{ QT_RC, S(RTS), S(ERR), A(STATE) },
		{ QT_RC, S(ERR), S(RESET), A(STATE) },
		/* rdma_cm: INIT->RTR with access flags and pkey as well */
		{ QT_RC, S(INIT), S(RTR),
		  A(STATE) | A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
		  A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER) |
		  A(ACCESS_FLAGS) | A(PKEY_INDEX) },
		{ QT_UD, S(RESET), S(INIT),
		  A(STATE) | A(PKEY_INDEX) | A(PORT) | A(QKEY) },
		{ QT_UD, S(INIT), S(RTR), A(STATE) },
		{ QT_UD, S(RTR), S(RTS), A(STATE) | A(SQ_PSN) },
		{ QT_UD, S(RTS), S(RTS), A(QKEY) },
		{ QT_UC, S(INIT), S(RTR),
		  A(STATE) | A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) },
		{ QT_UC, S(RTR), S(RTS), A(STATE) | A(SQ_PSN) },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(walk); i++)
		KUNIT_EXPECT_TRUE_MSG(test, qp_ok(walk[i].t, walk[i].cur,
						  walk[i].next, walk[i].mask),
				      "step %u", i);
}

static struct kunit_case sroce_qp_state_cases[] = {
	KUNIT_CASE(qp_state_transitions_test),
	KUNIT_CASE(qp_state_required_test),
	KUNIT_CASE(qp_state_optional_test),
	KUNIT_CASE(qp_state_known_answers_test),
	KUNIT_CASE(qp_state_walk_test),
	{}
};

static struct kunit_suite sroce_qp_state_suite = {
	.name = "sroce_qp_state",
	.test_cases = sroce_qp_state_cases,
};

kunit_test_suites(&sroce_qp_state_suite);
