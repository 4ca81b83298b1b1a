// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory windows: alloc_mw and dealloc_mw, the BIND_MW work request,
 * local and remote invalidation of a window, and the responder's rkey
 * lookup through a window.  The rules (keys, states, the consistency of
 * a binding against accesses, lifetime) are in mw.h.
 */
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <kunit/visibility.h>

#include "sroce.h"
#include "mr.h"
#include "mw.h"
#include "qp.h"

static inline struct sroce_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct sroce_mw, ibmw);
}

/**
 * sroce_mw_table_init - set up an empty window table
 * @table: the table, in the device
 */
void sroce_mw_table_init(struct sroce_mw_table *table)
{
	BUILD_BUG_ON(SROCE_MW_INDEX_MAX > 0xffffff);
	xa_init_flags(&table->xa, XA_FLAGS_ALLOC);
	table->next = SROCE_MW_INDEX_MIN;
}

/**
 * sroce_mw_table_destroy - free the window table of a device
 * @table: the table; every window has been deallocated
 */
void sroce_mw_table_destroy(struct sroce_mw_table *table)
{
	WARN_ON(!xa_empty(&table->xa));
	xa_destroy(&table->xa);
}

/* ------------------------------------------------------------ checks */

/**
 * sroce_mw_check_bind - may this bind change this window?
 * @mw: the window, its lock held
 * @pd: the PD of the QP that posted the bind
 * @mw_rkey: wr.mw.mw_rkey: the window's current rkey, as the poster knows it
 * @length: the length to bind; 0 unbinds a type 1 window
 * @access: the rights asked for
 *
 * Return: 0; -EINVAL for a window being deallocated, a stale rkey,
 * unsupported rights, a zero-based type 1 window (o10-36.2.2), a type 2
 * window that is bound already (o10-37.2.30) or a type 2 unbind
 * (o10-37.2.40); -EPERM for a QP of another PD (C10-72).
 */
int sroce_mw_check_bind(const struct sroce_mw *mw, const struct sroce_pd *pd,
			u32 mw_rkey, u64 length, int access)
{
	if (mw->state == SROCE_MW_DEAD || mw->key != mw_rkey)
		return -EINVAL;
	if (access & ~SROCE_ACCESS_MW)
		return -EINVAL;
	if (mw->ibmw.type == IB_MW_TYPE_1 && (access & IB_ZERO_BASED))
		return -EINVAL;
	if (mw->ibmw.type == IB_MW_TYPE_2 &&
	    (mw->state != SROCE_MW_FREE || !length))
		return -EINVAL;
	if (mw->pd != pd)
		return -EPERM;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mw_check_bind);

/**
 * sroce_mw_check_mr - may a window with @access be bound to this MR range?
 * @mr: the MR, its lock held for writing
 * @pd: the PD of the QP that posted the bind
 * @lkey: wr.mw.mr_lkey
 * @addr: the window's first address
 * @length: its length, not 0
 * @access: the window's rights
 *
 * Return: 0; -EINVAL for a stale lkey, an invalid MR or one being
 * deregistered; -EPERM for an MR of another PD; -EACCES for an MR
 * without IB_ACCESS_MW_BIND (C10-73) or a writable window on an MR
 * without local write (C10-74); -ERANGE for a range outside the MR
 * (C10-75).
 */
int sroce_mw_check_mr(const struct sroce_mr *mr, const struct sroce_pd *pd,
		      u32 lkey, u64 addr, u64 length, int access)
{
	if (mr->key != lkey || mr->state != SROCE_MR_VALID || mr->dying)
		return -EINVAL;
	if (mr->pd != pd)
		return -EPERM;
	if (!(mr->access & IB_ACCESS_MW_BIND))
		return -EACCES;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	if (!sroce_range_ok(mr->iova, mr->length, addr, length))
		return -ERANGE;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mw_check_mr);

/**
 * sroce_mw_check_access - may the peer of @qp access this window range?
 * @mw: the window; the read lock of the MR it was bound to is held
 * @qp: the responder's QP
 * @pd: its PD
 * @rkey: the rkey of the request
 * @access: IB_ACCESS_REMOTE_READ, _WRITE or _ATOMIC
 * @iova: the first address accessed; of a zero-based window, the offset
 * @length: the number of bytes
 *
 * Only the window's range and rights count, not the MR's.
 *
 * Return: 0, or the lookup errno of mr.h.
 */
int sroce_mw_check_access(const struct sroce_mw *mw,
			  const struct sroce_qp *qp, const struct sroce_pd *pd,
			  u32 rkey, int access, u64 iova, u64 length)
{
	if (mw->key != rkey)
		return -ENOKEY;
	if (mw->state != SROCE_MW_VALID || !mw->length)
		return -EKEYREVOKED;
	if (mw->pd != pd ||
	    (mw->ibmw.type == IB_MW_TYPE_2 && mw->qp != qp))
		return -EPERM;
	if (access & ~mw->access)
		return -EACCES;
	if (!sroce_range_ok(mw->access & IB_ZERO_BASED ? 0 : mw->addr,
			    mw->length, iova, length))
		return -ERANGE;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mw_check_access);

/**
 * sroce_mw_iova - the MR address an access through a window lands at
 * @mw: the window, the access checked (sroce_mw_check_access())
 * @iova: the address the access gives
 *
 * Return: @iova, or for a zero-based window @iova bytes after its start
 * (no overflow: the checked offset is below the length, and the bind
 * checked that the window fits in the MR).
 */
u64 sroce_mw_iova(const struct sroce_mw *mw, u64 iova)
{
	return mw->access & IB_ZERO_BASED ? mw->addr + iova : iova;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mw_iova);

/* ------------------------------------------------- binding, unbinding */

/* Is type 2 window @mw bound through @qp, not a QP gone before it? */
static bool sroce_mw_bound_to(const struct sroce_mw *mw,
			      const struct sroce_qp *qp)
{
	return mw->qp == qp && mw->qpn == qp->ibqp.qp_num;
}

/* The window with @key's index, or NULL; inside rcu_read_lock(). */
static struct sroce_mw *sroce_mw_find(struct sroce_dev *sdev, u32 key)
{
	if (!sroce_key_is_mw(key))
		return NULL;
	return xa_load(&sdev->mw_table.xa, key >> 8);
}

/*
 * Detach @mw from its MR once the accesses through it are done; the
 * caller drops the returned reference (it may be the last but one of a
 * dying MR: outside any lock).  @mw's lock is held.
 */
static struct sroce_mr *sroce_mw_unbind(struct sroce_mw *mw)
{
	struct sroce_mr *old = mw->mr;

	if (old) {
		write_lock_bh(&old->lock);
		WRITE_ONCE(mw->mr, NULL);
		old->nr_mw--;
		write_unlock_bh(&old->lock);
	}
	/* No lookup reads these now: they find mw->mr changed. */
	mw->length = 0;
	mw->addr = 0;
	mw->access = 0;
	mw->qp = NULL;
	return old;
}

/* Check @mr for the bind and count the window in it; @mw's lock is held. */
static int sroce_mw_reserve_mr(struct sroce_mr *mr, struct sroce_qp *qp,
			       const struct rxe_send_wr *wr)
{
	int err;

	write_lock_bh(&mr->lock);
	err = sroce_mw_check_mr(mr, qp->pd, wr->wr.mw.mr_lkey,
				wr->wr.mw.addr, wr->wr.mw.length,
				wr->wr.mw.access);
	if (!err)
		mr->nr_mw++;
	write_unlock_bh(&mr->lock);
	return err;
}

/*
 * Give the unbound @mw its new binding; @mr (NULL for a type 1 unbind)
 * was reserved and its reference passes to the window.
 */
static void sroce_mw_set(struct sroce_mw *mw, struct sroce_qp *qp,
			 struct sroce_mr *mr, const struct rxe_send_wr *wr)
{
	u32 key = (mw->key & ~0xffU) | (wr->wr.mw.rkey & 0xff);

	if (!mr) {
		WRITE_ONCE(mw->key, key);
		mw->ibmw.rkey = key;
		return;
	}
	write_lock_bh(&mr->lock);
	WRITE_ONCE(mw->key, key);
	mw->ibmw.rkey = key;
	mw->addr = wr->wr.mw.addr;
	mw->length = wr->wr.mw.length;
	mw->access = wr->wr.mw.access;
	if (mw->ibmw.type == IB_MW_TYPE_2) {
		mw->qp = qp;
		mw->qpn = qp->ibqp.qp_num;
		/* Its destroy_qp looks for windows (sroce_mw_qp_destroy()). */
		qp->mw_bound = true;
	}
	mw->state = SROCE_MW_VALID;
	/* Lookups read it before the lock: the lock orders the rest. */
	WRITE_ONCE(mw->mr, mr);
	write_unlock_bh(&mr->lock);
}

/**
 * sroce_mw_bind - carry out a BIND_MW work request
 * @qp: the QP that posted it
 * @wr: the work request (the ring's copy); wr.mw says what to bind
 *
 * Any context but hard interrupts.
 *
 * Return: 0; a negative errno (see the sroce_mw_check_*() functions;
 * -EINVAL also for an rkey or lkey that names nothing).  The work
 * request then completes with IB_WC_MW_BIND_ERR, as with rdma_rxe.
 */
int sroce_mw_bind(struct sroce_qp *qp, const struct rxe_send_wr *wr)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	struct sroce_mr *mr = NULL, *old = NULL;
	struct sroce_mw *mw;
	int err;

	rcu_read_lock();
	mw = sroce_mw_find(sdev, wr->wr.mw.mw_rkey);
	if (!mw) {
		err = -EINVAL;
		goto out;
	}
	if (wr->wr.mw.length) {
		mr = sroce_mr_get(sdev, wr->wr.mw.mr_lkey);
		if (!mr) {
			err = -EINVAL;
			goto out;
		}
	}

	spin_lock_bh(&mw->lock);
	err = sroce_mw_check_bind(mw, qp->pd, wr->wr.mw.mw_rkey,
				  wr->wr.mw.length, wr->wr.mw.access);
	if (!err && mr)
		err = sroce_mw_reserve_mr(mr, qp, wr);
	if (!err) {
		old = sroce_mw_unbind(mw);
		sroce_mw_set(mw, qp, mr, wr);
		mr = NULL;		/* the window's reference now */
	}
	spin_unlock_bh(&mw->lock);
out:
	rcu_read_unlock();
	if (old)
		sroce_mr_unref(old);
	if (mr)
		sroce_mr_unref(mr);
	return err;
}

/*
 * Invalidate type 2 window @mw (LOCAL_INV, or SEND_WITH_INV on @qp if
 * @remote).  A free window stays free.  Returns the MR reference to drop.
 */
static int sroce_mw_invalidate(struct sroce_mw *mw, struct sroce_qp *qp,
			       u32 rkey, bool remote, struct sroce_mr **old)
{
	int err = 0;

	spin_lock_bh(&mw->lock);
	if (mw->state == SROCE_MW_DEAD || mw->key != rkey)
		err = -ENOKEY;
	else if (mw->ibmw.type != IB_MW_TYPE_2)
		err = -EINVAL;		/* o10-37.2.26: type 1 cannot be */
	else if (mw->pd != qp->pd)
		err = -EPERM;
	else if (remote && mw->state == SROCE_MW_VALID &&
		 !sroce_mw_bound_to(mw, qp))
		err = -EPERM;		/* only through the QP it is bound to */
	else if (mw->state == SROCE_MW_VALID)
		*old = sroce_mw_unbind(mw);
	if (!err)
		mw->state = SROCE_MW_FREE;
	spin_unlock_bh(&mw->lock);
	return err;
}

/**
 * sroce_key_invalidate - LOCAL_INV or SEND_WITH_INV of an MR or a window
 * @qp: the requester's QP (LOCAL_INV) or the responder's (SEND_WITH_INV)
 * @key: the key to invalidate
 * @remote: the peer asked (SEND_WITH_INV)
 *
 * An MR key goes to sroce_mr_invalidate(); a window must be a type 2
 * window of @qp's PD and, for @remote, bound through @qp.  Returns once
 * no access uses the old binding.  Not in hard interrupt context.
 *
 * Return: 0 or a negative errno; the callers turn any error into
 * IB_WC_LOC_QP_OP_ERR (local) or a NAK invalid request (remote).
 */
int sroce_key_invalidate(struct sroce_qp *qp, u32 key, bool remote)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	struct sroce_mr *old = NULL;
	struct sroce_mw *mw;
	int err;

	if (!sroce_key_is_mw(key))
		return sroce_mr_invalidate(sdev, qp->pd, key, remote);

	rcu_read_lock();
	mw = sroce_mw_find(sdev, key);
	err = mw ? sroce_mw_invalidate(mw, qp, key, remote, &old) : -ENOKEY;
	rcu_read_unlock();
	if (old)
		sroce_mr_unref(old);
	return err;
}

/*
 * Free type 2 window @mw if it is bound through @qp, which is being
 * destroyed.  Returns the MR reference to drop.
 */
static struct sroce_mr *sroce_mw_drop_qp(struct sroce_mw *mw,
					 const struct sroce_qp *qp)
{
	struct sroce_mr *old = NULL;

	spin_lock_bh(&mw->lock);
	if (mw->ibmw.type == IB_MW_TYPE_2 && mw->state == SROCE_MW_VALID &&
	    sroce_mw_bound_to(mw, qp)) {
		old = sroce_mw_unbind(mw);
		mw->state = SROCE_MW_FREE;
	}
	spin_unlock_bh(&mw->lock);
	return old;
}

/**
 * sroce_mw_qp_destroy - free the type 2 windows bound through a QP
 * @qp: a QP being destroyed, its engine stopped: nothing binds through it
 *	or reaches a window through it any more
 *
 * The windows become free as after an invalidation, and their MRs may
 * be deregistered.  There is no list per QP: the device's windows are
 * walked (at most SROCE_MAX_MW, each a spinlock and a compare, pausing
 * every 64 for the scheduler), and only if @qp ever bound a type 2
 * window.  A window being deallocated meanwhile is left to dealloc_mw,
 * which unbinds it without looking at its QP.
 *
 * Context: process context (destroy_qp).
 */
void sroce_mw_qp_destroy(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);
	unsigned int n = 0;
	struct sroce_mr *old;
	struct sroce_mw *mw;
	unsigned long index;

	might_sleep();
	if (!qp->mw_bound)
		return;
	rcu_read_lock();
	xa_for_each_start(&sdev->mw_table.xa, index, mw, SROCE_MW_INDEX_MIN) {
		old = sroce_mw_drop_qp(mw, qp);
		if (!old && ++n % 64)
			continue;
		/* The walk goes on from index: no window is held across. */
		rcu_read_unlock();
		if (old)
			sroce_mr_unref(old);
		cond_resched();
		rcu_read_lock();
	}
	rcu_read_unlock();
}

/* ------------------------------------------------------------ lookup */

static struct sroce_mr *sroce_mw_lookup(struct sroce_qp *qp, u32 rkey,
					int access, u64 *iova, u64 length,
					int *err)
{
	struct sroce_mr *mr = NULL;
	struct sroce_mw *mw;

	rcu_read_lock();
	mw = sroce_mw_find(sroce_qp_dev(qp), rkey);
	if (mw)
		mr = READ_ONCE(mw->mr);
	/* The MR is freed after a grace period: safe to try here. */
	if (!mr || !refcount_inc_not_zero(&mr->ref)) {
		*err = mw ? -EKEYREVOKED : -ENOKEY;
		rcu_read_unlock();
		return NULL;
	}
	/* Held until sroce_mr_put(), see mw.h (sparse: see mr.c). */
	read_lock_bh(&mr->lock);
	__release(&mr->lock);
	/* Under the lock mw->mr, and all of the binding, stay put. */
	if (READ_ONCE(mw->mr) != mr)
		*err = -EKEYREVOKED;	/* rebound or invalidated meanwhile */
	else
		*err = sroce_mw_check_access(mw, qp, qp->pd, rkey, access,
					     *iova, length);
	if (!*err && mw->ibmw.type == IB_MW_TYPE_2 &&
	    !sroce_mw_bound_to(mw, qp))
		*err = -EPERM;
	if (!*err)
		*iova = sroce_mw_iova(mw, *iova);
	rcu_read_unlock();
	if (*err) {
		sroce_mr_put(mr);
		return NULL;
	}
	return mr;
}

/**
 * sroce_rkey_lookup - find the memory a peer's request names, and check it
 * @qp: the responder's QP
 * @rkey: the request's rkey: an MR's or a window's
 * @access: IB_ACCESS_REMOTE_READ, _WRITE or _ATOMIC
 * @iova: in: the first address accessed, as the request gives it; out,
 *	on success: the MR address it names (not the same for a zero-based
 *	window)
 * @length: the number of bytes
 * @err: 0 or the reason of the failure (mr.h)
 *
 * sroce_mr_lookup() for the peer, through a window if @rkey names one:
 * then the window's range and rights are checked, and the MR it is
 * bound to is returned, held as sroce_mr_lookup() holds it (drop it with
 * sroce_mr_put()).  Any context.
 *
 * Return: the MR, referenced, or NULL.
 */
struct sroce_mr *sroce_rkey_lookup(struct sroce_qp *qp, u32 rkey, int access,
				   u64 *iova, u64 length, int *err)
{
	if (!sroce_key_is_mw(rkey))
		return sroce_mr_lookup(sroce_qp_dev(qp), qp->pd, rkey, true,
				       access, *iova, length, err);
	if (!(access & SROCE_ACCESS_REMOTE)) {
		*err = -EACCES;
		return NULL;
	}
	return sroce_mw_lookup(qp, rkey, access, iova, length, err);
}

/* ------------------------------------------------------------- verbs */

static int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	u32 index;
	int err;

	mw->pd = container_of(ibmw->pd, struct sroce_pd, ibpd);
	spin_lock_init(&mw->lock);
	mw->state = ibmw->type == IB_MW_TYPE_2 ? SROCE_MW_FREE :
						 SROCE_MW_VALID;
	err = xa_alloc_cyclic(&sdev->mw_table.xa, &index, NULL,
			      XA_LIMIT(SROCE_MW_INDEX_MIN, SROCE_MW_INDEX_MAX),
			      &sdev->mw_table.next, GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	mw->index = index;
	mw->key = index << 8 | get_random_u8();
	ibmw->rkey = mw->key;

	/* Visible to binds and lookups from here on (xa_store orders it). */
	err = xa_err(xa_store(&sdev->mw_table.xa, index, mw, GFP_KERNEL));
	if (err)
		xa_erase(&sdev->mw_table.xa, index);
	return err;
}

/*
 * Unbind a window (waiting for the accesses through it) and forget it.
 * The core frees @ibmw when this returns: wait for the binds and lookups
 * that found it under RCU.
 */
static int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	struct sroce_mr *old;

	xa_erase(&sdev->mw_table.xa, mw->index);
	spin_lock_bh(&mw->lock);
	old = sroce_mw_unbind(mw);
	mw->state = SROCE_MW_DEAD;
	spin_unlock_bh(&mw->lock);
	if (old)
		sroce_mr_unref(old);
	synchronize_rcu();
	return 0;
}

static const struct ib_device_ops sroce_mw_ops = {
	.alloc_mw = sroce_alloc_mw,
	.dealloc_mw = sroce_dealloc_mw,

	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ibmw),
};

/* Install the window verbs; called while the device is set up. */
void sroce_mw_set_ops(struct ib_device *ibdev)
{
	ib_set_device_ops(ibdev, &sroce_mw_ops);
}
