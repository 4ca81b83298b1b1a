// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory regions, the core: the key table, an MR's allocation and
 * publication, fast registration and invalidation, and the checked
 * lookups the data path starts from.  The rules (keys, lifetime,
 * contexts, error codes) are in mr.h; user memory (pinned, on demand,
 * dma-buf, reregistered) is in mr_user.c, the MR verbs in mr_verbs.c,
 * the copies and atomics on MR memory in mem.c.
 */
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <kunit/visibility.h>

#include "sroce.h"
#include "mr.h"

/**
 * sroce_check_access - check the access flags a new registration asks for
 * @access: IB_ACCESS_* flags
 * @supported: those the kind of MR may have (SROCE_ACCESS_* in mr.h)
 *
 * Return: 0, -EOPNOTSUPP for a flag the kind does not support, -EINVAL
 * for a remote write or atomic right without local write.
 */
int sroce_check_access(int access, int supported)
{
	if (access & ~supported)
		return -EOPNOTSUPP;
	/* As ib_check_mr_access(): remote writes need local write. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/**
 * sroce_mr_table_init - set up an empty key table
 * @table: the table, in the device
 *
 * Call before anything can fail in device creation: destroy expects an
 * initialized table.
 */
void sroce_mr_table_init(struct sroce_mr_table *table)
{
	BUILD_BUG_ON(SROCE_MAX_MR > 0xffffff);
	xa_init_flags(&table->xa, XA_FLAGS_ALLOC1);
	table->next = 1;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_table_init);

/**
 * sroce_mr_table_destroy - free the key table of a device
 * @table: the table; every MR has been deregistered
 */
void sroce_mr_table_destroy(struct sroce_mr_table *table)
{
	WARN_ON(!xa_empty(&table->xa));
	xa_destroy(&table->xa);
}

/**
 * sroce_mr_alloc - a new MR with an index reserved in the table
 * @ibpd: its PD
 * @type: its kind
 * @access: its access flags, already checked
 *
 * Lookups do not see it until sroce_mr_publish(); until then
 * sroce_mr_free_unpublished() undoes everything (the caller first undoes
 * what it added itself: a umem, a dma-buf).  Process context.
 *
 * Return: the MR, or an ERR_PTR: -ENOMEM also when the table is full.
 */
struct sroce_mr *sroce_mr_alloc(struct ib_pd *ibpd, enum ib_mr_type type,
				int access)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	u32 index;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	err = xa_alloc_cyclic(&sdev->mr_table.xa, &index, NULL,
			      XA_LIMIT(1, SROCE_MAX_MR), &sdev->mr_table.next,
			      GFP_KERNEL);
	if (err < 0) {
		kfree(mr);
		/* A full table is the user running out of MRs. */
		return ERR_PTR(err == -EBUSY ? -ENOMEM : err);
	}

	mr->sdev = sdev;
	mr->pd = container_of(ibpd, struct sroce_pd, ibpd);
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	rwlock_init(&mr->lock);
	mr->type = type;
	mr->access = access;
	mr->index = index;
	mr->key = index << 8 | get_random_u8();
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	mr->ibmr.device = ibpd->device;
	mr->ibmr.pd = ibpd;
	return mr;
}

/* Make a fully set up MR visible to lookups (xa_store orders the stores). */
int sroce_mr_publish(struct sroce_mr *mr)
{
	return xa_err(xa_store(&mr->sdev->mr_table.xa, mr->index, mr,
			       GFP_KERNEL));
}

/* Free the page and block lists of @mr (unpublished, or released). */
void sroce_mr_free_lists(struct sroce_mr *mr)
{
	kvfree(mr->pages);
	kfree(mr->blocks);
	kfree(mr->map_blocks);
}

/* Undo sroce_mr_alloc() of an MR never published, and what it holds. */
void sroce_mr_free_unpublished(struct sroce_mr *mr)
{
	xa_erase(&mr->sdev->mr_table.xa, mr->index);
	sroce_mr_free_lists(mr);
	kfree(mr);
}

/**
 * sroce_mr_fast_reg - carry out an IB_WR_REG_MR
 * @mr: to_smr(reg_wr->mr); the poster holds it until the WR completes
 * @pd: the PD of the QP the WR was posted on
 * @key: reg_wr->key, the new lkey == rkey; only its low byte may differ
 * @access: reg_wr->access
 *
 * Registers the page list of the last map_mr_sg with the iova and length
 * it set in @mr->ibmr.  Any context.
 *
 * Return: 0; -EINVAL if @mr is not a fast-reg MR, @key names another
 * index, @access is inconsistent or the length exceeds the mapped
 * blocks; -EOPNOTSUPP for unsupported access flags; -EPERM for another
 * PD; -EBUSY if @mr is valid already.  The WR then completes with
 * IB_WC_LOC_QP_OP_ERR.
 */
int sroce_mr_fast_reg(struct sroce_mr *mr, struct sroce_pd *pd, u32 key,
		      int access)
{
	u64 mapped;
	int err;

	if (mr->type != IB_MR_TYPE_MEM_REG || key >> 8 != mr->index)
		return -EINVAL;
	if (mr->pd != pd)
		return -EPERM;
	err = sroce_check_access(access, SROCE_ACCESS_FAST_REG);
	if (err)
		return err;
	mapped = (u64)mr->map_nblocks << mr->map_shift;
	if (mr->map_first_off > mapped ||
	    mr->ibmr.length > mapped - mr->map_first_off)
		return -EINVAL;

	write_lock_bh(&mr->lock);
	if (mr->state == SROCE_MR_VALID) {
		err = -EBUSY;
	} else {
		memcpy(mr->blocks, mr->map_blocks,
		       mr->map_nblocks * sizeof(*mr->blocks));
		WRITE_ONCE(mr->key, key);
		WRITE_ONCE(mr->access, access);
		WRITE_ONCE(mr->iova, mr->ibmr.iova);
		WRITE_ONCE(mr->length, mr->ibmr.length);
		WRITE_ONCE(mr->nblocks, mr->map_nblocks);
		WRITE_ONCE(mr->block_shift, mr->map_shift);
		WRITE_ONCE(mr->first_off, mr->map_first_off);
		WRITE_ONCE(mr->state, SROCE_MR_VALID);
	}
	write_unlock_bh(&mr->lock);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_fast_reg);

/*
 * The MR with @key's index, referenced; NULL if there is none.  The key
 * byte is not checked: the caller does, under the lock if it needs one.
 */
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mr_table.xa, key >> 8);
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/**
 * sroce_mr_invalidate - carry out a local or remote invalidation
 * @sdev: the device
 * @pd: the PD of the QP that invalidates (requester for IB_WR_LOCAL_INV,
 *	responder for SEND_WITH_INV)
 * @key: the rkey to invalidate
 * @remote: the peer asked (SEND_WITH_INV): only a key the peer could use,
 *	an rkey (the MR grants a remote right), may be invalidated so
 *
 * Makes a fast-reg MR free again, once the accesses to it under way are
 * done.  An MR that is free already stays free: the verbs allow
 * invalidating an invalid key.  Not in hard interrupt context.
 *
 * Return: 0; -ENOKEY if no MR has @key; -EINVAL if it is not a fast-reg
 * MR; -EPERM if it belongs to another PD; -EACCES for a remote one
 * without a remote right; -EBUSY while windows are bound to it.  Local invalidation then
 * completes with IB_WC_LOC_QP_OP_ERR; a remote one is a NAK (invalid
 * request) and IB_WC_REM_INV_REQ_ERR on the responder.
 */
int sroce_mr_invalidate(struct sroce_dev *sdev, struct sroce_pd *pd, u32 key,
			bool remote)
{
	struct sroce_mr *mr;
	int err = 0;

	mr = sroce_mr_get(sdev, key);
	if (!mr)
		return -ENOKEY;

	if (mr->type != IB_MR_TYPE_MEM_REG) {
		sroce_mr_unref(mr);
		return -EINVAL;
	}
	/* Waits for the accesses under way (see mr->lock). */
	write_lock_bh(&mr->lock);
	if (mr->key != key)
		err = -ENOKEY;
	else if (mr->pd != pd)
		err = -EPERM;
	else if (remote && !(mr->access & SROCE_ACCESS_REMOTE))
		err = -EACCES;
	else if (mr->nr_mw)
		err = -EBUSY;	/* as rdma_rxe: its windows would dangle */
	else
		WRITE_ONCE(mr->state, SROCE_MR_FREE);
	write_unlock_bh(&mr->lock);

	sroce_mr_unref(mr);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_invalidate);

static int sroce_mr_check(struct sroce_mr *mr, struct sroce_pd *pd, u32 key,
			  int access, u64 iova, u64 length)
{
	if (mr->key != key)
		return -ENOKEY;
	if (mr->state != SROCE_MR_VALID)
		return -EKEYREVOKED;
	if (mr->pd != pd)
		return -EPERM;
	if (access & ~mr->access)
		return -EACCES;
	/* Only a FLUSH may reach the whole MR, whatever its RETH says. */
	if ((length != SROCE_MR_WHOLE || !(access & SROCE_ACCESS_FLUSH)) &&
	    !sroce_range_ok(mr->iova, mr->length, iova, length))
		return -ERANGE;
	return 0;
}

/**
 * sroce_mr_lookup - find an MR by key and check an access to it
 * @sdev: the device
 * @pd: the PD of the QP doing the access: the requester's for its own
 *	SGEs, the responder's for the peer's RDMA and atomic requests
 * @key: the lkey or rkey, all 32 bits of it
 * @remote: the access is for the peer; @access must then ask for a
 *	remote right
 * @access: the rights needed: 0 to read local memory,
 *	IB_ACCESS_LOCAL_WRITE to write it, IB_ACCESS_REMOTE_READ/WRITE/ATOMIC
 * @iova: the first address accessed
 * @length: the number of bytes; 0 checks that @iova is inside the MR or
 *	just past its end (callers skip the lookup when IBA says a
 *	zero-length access ignores the key); SROCE_MR_WHOLE with a flush
 *	right in @access checks no range (a FLUSH of the whole MR)
 * @err: 0 or the reason of the failure (see mr.h)
 *
 * Any context.  The caller drops the reference with sroce_mr_put().
 *
 * Return: the MR, referenced, or NULL.
 */
struct sroce_mr *sroce_mr_lookup(struct sroce_dev *sdev, struct sroce_pd *pd,
				 u32 key, bool remote, int access, u64 iova,
				 u64 length, int *err)
{
	struct sroce_mr *mr;
	int ret;

	if (remote && !(access & SROCE_ACCESS_REMOTE)) {
		*err = -EACCES;
		return NULL;
	}

	mr = sroce_mr_get(sdev, key);
	if (!mr) {
		*err = -ENOKEY;
		return NULL;
	}

	/*
	 * A fast-reg MR, or an MR with windows, changes: hold it till the
	 * put.  (sparse cannot follow a lock held across functions; the
	 * put says so too.)
	 */
	if (sroce_mr_locked(mr)) {
		read_lock_bh(&mr->lock);
		__release(&mr->lock);
	}
	ret = sroce_mr_check(mr, pd, key, access, iova, length);
	*err = ret;
	if (ret) {
		sroce_mr_put(mr);
		return NULL;
	}
	return mr;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_lookup);

/**
 * sroce_mr_wc_status - the completion status for an MR error
 * @err: a negative errno from an MR lookup, copy or atomic (mr.h)
 * @remote: true for a peer's request (RDMA READ/WRITE, atomic): the
 *	status the requester reports once the responder has NAKed; false
 *	for a local SGE or buffer: the status of the work request that
 *	owns it
 *
 * Not for sroce_mr_fast_reg() and sroce_mr_invalidate(): see there.
 */
enum ib_wc_status sroce_mr_wc_status(int err, bool remote)
{
	switch (err) {
	case -ENOSPC:
		return remote ? IB_WC_REM_INV_REQ_ERR : IB_WC_LOC_LEN_ERR;
	case -EINVAL:
		return remote ? IB_WC_REM_INV_REQ_ERR : IB_WC_LOC_QP_OP_ERR;
	default:
		return remote ? IB_WC_REM_ACCESS_ERR : IB_WC_LOC_PROT_ERR;
	}
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_wc_status);
