/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Memory windows (mw.c): type 1 and type 2B windows, their verbs, the
 * BIND_MW work request, their invalidation, and the rkey lookup of the
 * responder, which finds an MR either directly or through a window.
 *
 * Keys.  A window's rkey is index << 8 | key like an MR's, with its
 * index in a range of its own (SROCE_MW_INDEX_MIN ..), so the index
 * alone says whether an rkey names a window or an MR.  librxe posts a
 * bind with the new key byte in wr.mw.rkey (type 1: ibv_bind_mw() picks
 * the next one; type 2: the consumer, with ibv_inc_rkey()).
 *
 * States.  A type 1 window is valid from alloc_mw to dealloc_mw, bound
 * (to an MR, with a range and rights) or not (length 0): binding with
 * length 0 unbinds it, and it cannot be invalidated.  A type 2 window is
 * free until a bind makes it valid, for the QP that posted the bind
 * only; LOCAL_INV, or a SEND_WITH_INV arriving on that QP, makes it free
 * again.
 *
 * Zero-based windows (IB_ZERO_BASED, type 2 only, as rdma_rxe; a type 1
 * bind asking for one fails, o10-36.2.2).  The bind names the MR range
 * as for any window (@addr, @length, checked against the MR); the peer
 * then addresses the window by offset: 0 is its first byte, and the
 * access is checked against [0, @length) and lands at @addr + offset
 * (sroce_mw_iova()).  sroce_rkey_lookup() hands the caller that address.
 *
 * A type 2 window and its QP.  Destroying the QP frees the type 2 windows
 * bound through it, as an invalidation would (sroce_mw_qp_destroy()): they
 * release their MR and may be bound again through another QP.  So a
 * window's @qp never outlives the QP.
 *
 * Consistency (the fast-reg rule of mr.h, for windows).  Binds,
 * invalidations and dealloc take the window's spinlock.  mw->mr changes
 * only under the write lock of the MR it leaves (unbind: to NULL) or
 * gets (bind), and the rest of the binding -- key, range, rights, QP --
 * only while mw->mr is NULL or under that same write lock.  An access
 * through a window takes a reference on mw->mr, holds that MR's lock
 * for reading (sroce_mr_locked() is true for every MR a window can be
 * bound to), and checks mw->mr again and the window only then: it sees
 * one binding whole, or fails; and an unbind or invalidation returns
 * only once no access is using the old binding.
 * The MR the window is bound to counts it (mr->nr_mw), so it cannot be
 * deregistered or invalidated meanwhile.
 *
 * Lifetime.  The core frees the ib_mw as soon as dealloc_mw returns, so
 * lookups and binds use a window only inside an RCU read-side section,
 * and dealloc_mw waits for a grace period after erasing it.
 *
 * Contexts.  alloc_mw, dealloc_mw and the table init/destroy sleep; the
 * rest runs in the engine (any context but hard interrupts).
 */
#ifndef SROCE_MW_H
#define SROCE_MW_H

#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "params.h"

struct rxe_send_wr;
struct sroce_dev;
struct sroce_mr;
struct sroce_pd;
struct sroce_qp;

#define SROCE_MW_INDEX_MIN	(SROCE_MAX_MR + 1)
#define SROCE_MW_INDEX_MAX	(SROCE_MAX_MR + SROCE_MAX_MW)

/* The rights a window may be given; only the remote ones grant anything. */
#define SROCE_ACCESS_MW		(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND | \
				 IB_ZERO_BASED)

enum sroce_mw_state {
	SROCE_MW_FREE,		/* type 2, not bound */
	SROCE_MW_VALID,		/* type 1 always, type 2 bound */
	SROCE_MW_DEAD,		/* dealloc_mw has started */
};

/**
 * struct sroce_mw - a memory window
 * @ibmw: the core's object; must stay first
 * @pd: the window's PD
 * @lock: serializes binds, invalidations and dealloc
 * @state: see enum sroce_mw_state; under @lock
 * @index: the table index, fixed
 * @key: the current rkey
 * @access: the rights granted
 * @addr: the first address of the window, in the MR (also zero-based)
 * @length: its length; 0 when not bound
 * @mr: the MR bound to, referenced and counted in its nr_mw; NULL if none
 * @qp: type 2: the QP the window is bound to.  Only compared, never
 *	dereferenced (no reference is held: its destroy_qp frees the window)
 * @qpn: type 2: its number, checked too (QP numbers are cyclic)
 */
struct sroce_mw {
	struct ib_mw ibmw;
	struct sroce_pd *pd;
	spinlock_t lock;	/* binds, invalidations and dealloc */
	enum sroce_mw_state state;
	u32 index;
	u32 key;
	int access;
	u64 addr;
	u64 length;
	struct sroce_mr *mr;
	const struct sroce_qp *qp;
	u32 qpn;
};

/**
 * struct sroce_mw_table - the windows of one device, by key index
 * @xa: index -> struct sroce_mw; readers use RCU
 * @next: where the cyclic allocation continues
 */
struct sroce_mw_table {
	struct xarray xa;
	u32 next;
};

static inline bool sroce_key_is_mw(u32 key)
{
	return key >> 8 >= SROCE_MW_INDEX_MIN;
}

void sroce_mw_table_init(struct sroce_mw_table *table);
void sroce_mw_table_destroy(struct sroce_mw_table *table);
void sroce_mw_set_ops(struct ib_device *ibdev);

int sroce_mw_check_bind(const struct sroce_mw *mw, const struct sroce_pd *pd,
			u32 mw_rkey, u64 length, int access);
int sroce_mw_check_mr(const struct sroce_mr *mr, const struct sroce_pd *pd,
		      u32 lkey, u64 addr, u64 length, int access);
int sroce_mw_check_access(const struct sroce_mw *mw,
			  const struct sroce_qp *qp, const struct sroce_pd *pd,
			  u32 rkey, int access, u64 iova, u64 length);
u64 sroce_mw_iova(const struct sroce_mw *mw, u64 iova);

int sroce_mw_bind(struct sroce_qp *qp, const struct rxe_send_wr *wr);
int sroce_key_invalidate(struct sroce_qp *qp, u32 key, bool remote);
void sroce_mw_qp_destroy(struct sroce_qp *qp);
struct sroce_mr *sroce_rkey_lookup(struct sroce_qp *qp, u32 rkey, int access,
				   u64 *iova, u64 length, int *err);

#endif /* SROCE_MW_H */
