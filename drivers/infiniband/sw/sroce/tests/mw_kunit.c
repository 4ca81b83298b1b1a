// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the memory window checks (mw.c), without a device: the
 * bind checks on the window and on the MR, and the access check of the
 * responder, on hand-made windows and MRs.
 *
 * What it proves:
 *  - a bind needs the window's current rkey, supported rights (zero-based
 *    for type 2 only), the QP's PD; a type 2 window must be free and
 *    the bind must have a length; a type 1 window may be rebound and
 *    unbound (length 0); a deallocating window cannot be bound;
 *  - the MR of a bind must carry the lkey given, be valid and not being
 *    deregistered, belong to the PD, grant MW_BIND, have local write for
 *    a writable window, and hold the whole range (edges, overflow);
 *  - an access through a window is checked against the window's own
 *    range and rights, not the MR's; a type 2 window only through the
 *    QP it is bound to; an unbound or stale key is refused;
 *  - a zero-based window is addressed by offset, [0, length), and an
 *    offset lands at the window's start in the MR.
 */
#include <kunit/test.h>

#include "../sroce.h"
#include "../mr.h"
#include "../mw.h"

#define MW_ADDR		0x10000ULL
#define MW_LEN		0x2000ULL
#define MR_ADDR		0x8000ULL
#define MR_LEN		0x10000ULL

static void mw_init(struct sroce_mw *mw, struct sroce_pd *pd,
		    enum ib_mw_type type, enum sroce_mw_state state)
{
	memset(mw, 0, sizeof(*mw));
	mw->ibmw.type = type;
	mw->pd = pd;
	mw->state = state;
	mw->key = 0x10001 << 8 | 0x42;
}

static void mr_init(struct sroce_mr *mr, struct sroce_pd *pd, int access)
{
	memset(mr, 0, sizeof(*mr));
	mr->type = IB_MR_TYPE_USER;
	mr->pd = pd;
	mr->state = SROCE_MR_VALID;
	mr->key = 7 << 8 | 0x11;
	mr->access = access;
	mr->iova = MR_ADDR;
	mr->length = MR_LEN;
}

static void mw_check_bind_test(struct kunit *test)
{
	struct sroce_pd pd, other;
	struct sroce_mw mw;
	u32 key;

	mw_init(&mw, &pd, IB_MW_TYPE_1, SROCE_MW_VALID);
	key = mw.key;
	KUNIT_EXPECT_EQ(test, sroce_mw_check_bind(&mw, &pd, key, MW_LEN,
						  IB_ACCESS_REMOTE_READ), 0);
	/* a type 1 window: unbind with length 0, and rebind while bound */
	KUNIT_EXPECT_EQ(test, sroce_mw_check_bind(&mw, &pd, key, 0, 0), 0);
	mw.length = MW_LEN;
	KUNIT_EXPECT_EQ(test, sroce_mw_check_bind(&mw, &pd, key, MW_LEN,
						  IB_ACCESS_REMOTE_WRITE), 0);
	/* stale rkey, other PD, zero-based, unknown rights */
	KUNIT_EXPECT_EQ(test, sroce_mw_check_bind(&mw, &pd, key ^ 1, MW_LEN, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_bind(&mw, &other, key, MW_LEN, 0),
			-EPERM);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_bind(&mw, &pd, key, MW_LEN,
						  IB_ZERO_BASED), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_bind(&mw, &pd, key, MW_LEN,
						  IB_ACCESS_ON_DEMAND), -EINVAL);
	/* deallocating */
	mw.state = SROCE_MW_DEAD;
	KUNIT_EXPECT_EQ(test, sroce_mw_check_bind(&mw, &pd, key, MW_LEN, 0),
			-EINVAL);

	/* type 2: only when free, never with length 0 */
	mw_init(&mw, &pd, IB_MW_TYPE_2, SROCE_MW_FREE);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_bind(&mw, &pd, key, MW_LEN,
						  IB_ACCESS_REMOTE_ATOMIC), 0);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_bind(&mw, &pd, key, 0, 0), -EINVAL);
	/* zero-based: type 2 only */
	KUNIT_EXPECT_EQ(test, sroce_mw_check_bind(&mw, &pd, key, MW_LEN,
						  IB_ZERO_BASED |
						  IB_ACCESS_REMOTE_READ), 0);
	mw.state = SROCE_MW_VALID;
	KUNIT_EXPECT_EQ(test, sroce_mw_check_bind(&mw, &pd, key, MW_LEN, 0),
			-EINVAL);
}

static void mw_check_mr_test(struct kunit *test)
{
	const int rw = IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE;
	struct sroce_pd pd, other;
	struct sroce_mr mr;
	u32 lkey;

	mr_init(&mr, &pd, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND);
	lkey = mr.key;
	KUNIT_EXPECT_EQ(test, sroce_mw_check_mr(&mr, &pd, lkey, MW_ADDR, MW_LEN,
						rw), 0);
	/* the whole MR, and its edges */
	KUNIT_EXPECT_EQ(test, sroce_mw_check_mr(&mr, &pd, lkey, MR_ADDR, MR_LEN,
						rw), 0);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_mr(&mr, &pd, lkey, MR_ADDR - 1, 2,
						rw), -ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_mr(&mr, &pd, lkey,
						MR_ADDR + MR_LEN - 1, 2, rw),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_mr(&mr, &pd, lkey, MW_ADDR,
						U64_MAX, rw), -ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_mr(&mr, &pd, lkey, U64_MAX, 2, rw),
			-ERANGE);
	/* stale lkey, other PD, invalid, dying */
	KUNIT_EXPECT_EQ(test, sroce_mw_check_mr(&mr, &pd, lkey + 1, MW_ADDR,
						MW_LEN, rw), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_mr(&mr, &other, lkey, MW_ADDR,
						MW_LEN, rw), -EPERM);
	mr.state = SROCE_MR_FREE;
	KUNIT_EXPECT_EQ(test, sroce_mw_check_mr(&mr, &pd, lkey, MW_ADDR, MW_LEN,
						rw), -EINVAL);
	mr.state = SROCE_MR_VALID;
	mr.dying = true;
	KUNIT_EXPECT_EQ(test, sroce_mw_check_mr(&mr, &pd, lkey, MW_ADDR, MW_LEN,
						rw), -EINVAL);

	/* C10-73: MW_BIND; C10-74: a writable window needs local write */
	mr_init(&mr, &pd, IB_ACCESS_LOCAL_WRITE | rw);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_mr(&mr, &pd, lkey, MW_ADDR, MW_LEN,
						IB_ACCESS_REMOTE_READ), -EACCES);
	mr_init(&mr, &pd, IB_ACCESS_MW_BIND | IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_mr(&mr, &pd, lkey, MW_ADDR, MW_LEN,
						IB_ACCESS_REMOTE_READ), 0);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_mr(&mr, &pd, lkey, MW_ADDR, MW_LEN,
						IB_ACCESS_REMOTE_WRITE), -EACCES);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_mr(&mr, &pd, lkey, MW_ADDR, MW_LEN,
						IB_ACCESS_REMOTE_ATOMIC), -EACCES);
}

static void mw_check_access_test(struct kunit *test)
{
	static char qp_a, qp_b;	/* two QPs, only compared */
	struct sroce_qp *qp = (struct sroce_qp *)&qp_a;
	struct sroce_qp *qp2 = (struct sroce_qp *)&qp_b;
	struct sroce_pd pd, other;
	struct sroce_mw mw;
	u32 key;

	mw_init(&mw, &pd, IB_MW_TYPE_2, SROCE_MW_VALID);
	key = mw.key;
	mw.addr = MW_ADDR;
	mw.length = MW_LEN;
	mw.access = IB_ACCESS_REMOTE_READ;
	mw.qp = qp;

	/* the window's range, not the MR's */
	KUNIT_EXPECT_EQ(test, sroce_mw_check_access(&mw, qp, &pd, key,
						    IB_ACCESS_REMOTE_READ,
						    MW_ADDR, MW_LEN), 0);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_access(&mw, qp, &pd, key,
						    IB_ACCESS_REMOTE_READ,
						    MW_ADDR + MW_LEN - 8, 16),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_access(&mw, qp, &pd, key,
						    IB_ACCESS_REMOTE_READ,
						    MW_ADDR - 8, 16), -ERANGE);
	/* the window's rights */
	KUNIT_EXPECT_EQ(test, sroce_mw_check_access(&mw, qp, &pd, key,
						    IB_ACCESS_REMOTE_WRITE,
						    MW_ADDR, 8), -EACCES);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_access(&mw, qp, &pd, key,
						    IB_ACCESS_REMOTE_ATOMIC,
						    MW_ADDR, 8), -EACCES);
	/* key byte, PD, QP of a type 2 window */
	KUNIT_EXPECT_EQ(test, sroce_mw_check_access(&mw, qp, &pd, key + 1,
						    IB_ACCESS_REMOTE_READ,
						    MW_ADDR, 8), -ENOKEY);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_access(&mw, qp, &other, key,
						    IB_ACCESS_REMOTE_READ,
						    MW_ADDR, 8), -EPERM);
	KUNIT_EXPECT_EQ(test, sroce_mw_check_access(&mw, qp2, &pd, key,
						    IB_ACCESS_REMOTE_READ,
						    MW_ADDR, 8), -EPERM);
	/* a type 1 window: any QP of the PD */
	mw.ibmw.type = IB_MW_TYPE_1;
	mw.qp = NULL;
	KUNIT_EXPECT_EQ(test, sroce_mw_check_access(&mw, qp2, &pd, key,
						    IB_ACCESS_REMOTE_READ,
						    MW_ADDR, 8), 0);
	/* unbound: length 0 */
	mw.length = 0;
	KUNIT_EXPECT_EQ(test, sroce_mw_check_access(&mw, qp2, &pd, key,
						    IB_ACCESS_REMOTE_READ,
						    MW_ADDR, 0), -EKEYREVOKED);
	/* the index ranges */
	KUNIT_EXPECT_FALSE(test, sroce_key_is_mw(SROCE_MAX_MR << 8 | 0xff));
	KUNIT_EXPECT_TRUE(test, sroce_key_is_mw(SROCE_MW_INDEX_MIN << 8));
}

/* An access by @qp of @mw's PD with @mw's key, checked. */
static int mw_access(const struct sroce_mw *mw, const struct sroce_qp *qp,
		     int access, u64 iova, u64 length)
{
	return sroce_mw_check_access(mw, qp, mw->pd, mw->key, access, iova,
				     length);
}

static void mw_zero_based_test(struct kunit *test)
{
	const int rd = IB_ACCESS_REMOTE_READ;
	static char qp_a;	/* a QP, only compared */
	struct sroce_qp *qp = (struct sroce_qp *)&qp_a;
	struct sroce_pd pd;
	struct sroce_mw mw;

	mw_init(&mw, &pd, IB_MW_TYPE_2, SROCE_MW_VALID);
	mw.addr = MW_ADDR;
	mw.length = MW_LEN;
	mw.access = IB_ZERO_BASED | rd;
	mw.qp = qp;

	/* offsets [0, length): the first bytes, the last ones, the whole */
	KUNIT_EXPECT_EQ(test, mw_access(&mw, qp, rd, 0, 8), 0);
	KUNIT_EXPECT_EQ(test, mw_access(&mw, qp, rd, MW_LEN - 8, 8), 0);
	KUNIT_EXPECT_EQ(test, mw_access(&mw, qp, rd, 0, MW_LEN), 0);
	/* past the end; the window's own address is out of range now */
	KUNIT_EXPECT_EQ(test, mw_access(&mw, qp, rd, MW_LEN - 8, 16), -ERANGE);
	KUNIT_EXPECT_EQ(test, mw_access(&mw, qp, rd, MW_ADDR, 8), -ERANGE);
	KUNIT_EXPECT_EQ(test, mw_access(&mw, qp, rd, U64_MAX, 2), -ERANGE);
	/* the rights still count */
	KUNIT_EXPECT_EQ(test, mw_access(&mw, qp, IB_ACCESS_REMOTE_WRITE, 0, 8),
			-EACCES);
	/* an offset lands at the window's start in the MR */
	KUNIT_EXPECT_EQ(test, sroce_mw_iova(&mw, 0), MW_ADDR);
	KUNIT_EXPECT_EQ(test, sroce_mw_iova(&mw, MW_LEN - 8),
			MW_ADDR + MW_LEN - 8);
	/* a window based at its address: the address is the MR's */
	mw.access = rd;
	KUNIT_EXPECT_EQ(test, sroce_mw_iova(&mw, MW_ADDR + 8), MW_ADDR + 8);
	KUNIT_EXPECT_EQ(test, mw_access(&mw, qp, rd, 0, 8), -ERANGE);
}

static struct kunit_case sroce_mw_cases[] = {
	KUNIT_CASE(mw_check_bind_test),
	KUNIT_CASE(mw_check_mr_test),
	KUNIT_CASE(mw_check_access_test),
	KUNIT_CASE(mw_zero_based_test),
	{}
};

static struct kunit_suite sroce_mw_suite = {
	.name = "sroce_mw",
	.test_cases = sroce_mw_cases,
};

kunit_test_suites(&sroce_mw_suite);
