// SPDX-License-Identifier: GPL-2.0-only
/*
 * Implicit ODP: the MR over the whole user address space and its
 * children, one ib_umem_odp per SROCE_ODP_CHILD_SIZE of it, made when a
 * fault first reaches their addresses and removed when they map nothing
 * or the MR goes.  The rules are in odp_implicit.h; the per-page work
 * (checks, faults, invalidation) is odp.c's, shared with explicit MRs.
 */
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"
#include "odp_implicit.h"

static struct sroce_odp_imr *sroce_odp_imr(const struct sroce_mr *mr)
{
	return to_ib_umem_odp(mr->umem)->private;
}

static void sroce_odp_imr_reap_work(struct work_struct *work);

/**
 * sroce_odp_imr_get - the root umem of a new implicit ODP MR
 * @ibdev: the device
 * @access: the MR's access flags (IB_ACCESS_HUGETLB: -EINVAL, as the
 *	core's children have PAGE_SIZE pages)
 *
 * Process context: the registering process's mm and TASK_SIZE.
 *
 * Return: the root, its ->private our state, or an ERR_PTR.
 */
struct ib_umem_odp *sroce_odp_imr_get(struct ib_device *ibdev, int access)
{
	struct ib_umem_odp *root;
	struct sroce_odp_imr *imr;

	imr = kzalloc(sizeof(*imr), GFP_KERNEL);
	if (!imr)
		return ERR_PTR(-ENOMEM);
	root = ib_umem_odp_alloc_implicit(ibdev, access);
	if (IS_ERR(root)) {
		kfree(imr);
		return root;
	}
	mutex_init(&imr->lock);
	xa_init(&imr->children);
	INIT_WORK(&imr->reap_work, sroce_odp_imr_reap_work);
	imr->limit = TASK_SIZE;
	root->private = imr;
	return root;
}

/* @root becomes the memory of @mr, not published yet. */
void sroce_odp_imr_attach(struct sroce_mr *mr, struct ib_umem_odp *root)
{
	struct sroce_odp_imr *imr = root->private;

	imr->mr = mr;
}

/*
 * Take @child out of @imr (@lock held) and let it go once no access
 * uses it (odp_implicit.h).
 */
static void sroce_odp_imr_remove(struct sroce_odp_imr *imr, unsigned long idx,
				 struct ib_umem_odp *child)
{
	struct sroce_mr *mr = imr->mr;

	xa_erase(&imr->children, idx);
	/* Wait for the accesses that may have found it. */
	write_lock_bh(&mr->lock);
	write_unlock_bh(&mr->lock);
	ib_umem_odp_release(child);
	atomic_dec(&mr->sdev->odp.children);
}

/* Remove the children of @imr that map nothing (@lock held). */
static void sroce_odp_imr_reap(struct sroce_odp_imr *imr)
{
	struct ib_umem_odp *child;
	unsigned long idx;

	/* Bounded: at most SROCE_ODP_CHILDREN_MAX. */
	xa_for_each(&imr->children, idx, child)
		if (!READ_ONCE(child->npages))
			sroce_odp_imr_remove(imr, idx, child);
}

static void sroce_odp_imr_reap_work(struct work_struct *work)
{
	struct sroce_odp_imr *imr = container_of(work, struct sroce_odp_imr,
						 reap_work);

	mutex_lock(&imr->lock);
	if (!imr->dying)
		sroce_odp_imr_reap(imr);
	mutex_unlock(&imr->lock);
}

/**
 * sroce_odp_imr_emptied - an invalidation unmapped a child's last page
 * @mr: the implicit MR; the child's notifier runs, so the MR is there
 *
 * Any context the notifier runs in: only queues the reap.
 */
void sroce_odp_imr_emptied(struct sroce_mr *mr)
{
	queue_work(system_unbound_wq, &sroce_odp_imr(mr)->reap_work);
}

/**
 * sroce_odp_imr_release - let the root of an implicit ODP MR go
 * @root: from sroce_odp_imr_get(); no access uses its MR any more
 *
 * Removes every child first: their notifiers are what could still queue
 * the reap, so it is cancelled after.  Process context.
 */
void sroce_odp_imr_release(struct ib_umem_odp *root)
{
	struct sroce_odp_imr *imr = root->private;
	struct ib_umem_odp *child;
	unsigned long idx;

	mutex_lock(&imr->lock);
	imr->dying = true;
	xa_for_each(&imr->children, idx, child)
		sroce_odp_imr_remove(imr, idx, child);
	mutex_unlock(&imr->lock);
	cancel_work_sync(&imr->reap_work);
	xa_destroy(&imr->children);
	kfree(imr);
	ib_umem_odp_release(root);
}

/*
 * The child of @imr for index @idx, made if there is none (@lock held).
 * Return: it, or an ERR_PTR: -ENOSPC at the device's cap.
 */
static struct ib_umem_odp *sroce_odp_imr_child(struct sroce_odp_imr *imr,
					       unsigned long idx)
{
	struct sroce_dev *sdev = imr->mr->sdev;
	u64 start = (u64)idx << SROCE_ODP_CHILD_SHIFT;
	struct ib_umem_odp *child;
	int err;

	child = xa_load(&imr->children, idx);
	if (child)
		return child;
	if (!atomic_add_unless(&sdev->odp.children, 1,
			       SROCE_ODP_CHILDREN_MAX)) {
		sroce_odp_imr_reap(imr);
		if (!atomic_add_unless(&sdev->odp.children, 1,
				       SROCE_ODP_CHILDREN_MAX)) {
			sroce_count(sdev, SROCE_CNT_ODP_CHILD_REFUSED);
			return ERR_PTR(-ENOSPC);
		}
	}
	child = ib_umem_odp_alloc_child(to_ib_umem_odp(imr->mr->umem), start,
					min_t(u64, SROCE_ODP_CHILD_SIZE,
					      imr->limit - start),
					&sroce_odp_notifier_ops);
	if (IS_ERR(child))
		goto fail;
	/* Its invalidations exclude the MR's accesses from here on. */
	mutex_lock(&child->umem_mutex);
	child->private = imr->mr;
	mutex_unlock(&child->umem_mutex);
	err = xa_err(xa_store(&imr->children, idx, child, GFP_KERNEL));
	if (err) {
		ib_umem_odp_release(child);
		child = ERR_PTR(err);
		goto fail;
	}
	sroce_count(sdev, SROCE_CNT_ODP_CHILDREN);
	return child;
fail:
	atomic_dec(&sdev->odp.children);
	return child;
}

/**
 * sroce_odp_imr_fault - fault in a range of an implicit ODP MR
 * @mr: the MR, referenced
 * @va: the first user address
 * @len: bytes
 * @write: map writable
 * @how: SROCE_ODP_MAP_* (odp.h)
 *
 * Child by child; children are made as needed and removed again if
 * they end up mapping nothing.  Process context; sleeps.
 *
 * Return: 0; or the error of the first page that could not be mapped,
 * which is remembered for the access that waits, if one does (odp.h).
 */
int sroce_odp_imr_fault(struct sroce_mr *mr, u64 va, u64 len, bool write,
			unsigned int how)
{
	struct sroce_odp_imr *imr = sroce_odp_imr(mr);
	struct ib_umem_odp *child;
	u64 end, next;
	int err = 0;

	/* The data path never asks for these (sroce_odp_imr_ready()). */
	if (va >= imr->limit || len > imr->limit - va)
		return -EFAULT;
	end = va + len;
	mutex_lock(&imr->lock);
	/* Bounded: a fault is at most SROCE_ODP_FAULT_CHUNK, advise_mr's 4G. */
	for (; va < end && !err; va = next) {
		next = min(end, ALIGN_DOWN(va, SROCE_ODP_CHILD_SIZE) +
				SROCE_ODP_CHILD_SIZE);
		child = sroce_odp_imr_child(imr, va >> SROCE_ODP_CHILD_SHIFT);
		if (IS_ERR(child)) {
			err = PTR_ERR(child);
			if (how & SROCE_ODP_MAP_ACCESS)
				sroce_odp_set_err(mr, va);
			break;
		}
		err = sroce_odp_fault_range(mr, child, va, next - va, write,
					    how);
		if (!READ_ONCE(child->npages))
			sroce_odp_imr_remove(imr, va >> SROCE_ODP_CHILD_SHIFT,
					     child);
		cond_resched();
	}
	mutex_unlock(&imr->lock);
	return err;
}

/**
 * sroce_odp_imr_ready - the data path's check of an implicit ODP MR
 * @mr: from sroce_mr_lookup(), its lock held for reading
 * @uva: the first user address (== iova)
 * @len: bytes, not 0
 * @write: the access writes
 *
 * Any context; never sleeps or allocates (but for the fault request).
 *
 * Return: as sroce_odp_ready(); -EFAULT past the user address space.
 */
int sroce_odp_imr_ready(struct sroce_mr *mr, u64 uva, u64 len, bool write)
{
	struct sroce_odp_imr *imr = sroce_odp_imr(mr);
	u64 va = uva, end, next;
	struct ib_umem_odp *child;
	int err;

	if (uva >= imr->limit || len > imr->limit - uva)
		return -EFAULT;
	end = uva + len;
	/* Bounded by the access's length, a child at a time. */
	for (; va < end; va = next) {
		next = min(end, ALIGN_DOWN(va, SROCE_ODP_CHILD_SIZE) +
				SROCE_ODP_CHILD_SIZE);
		child = xa_load(&imr->children, va >> SROCE_ODP_CHILD_SHIFT);
		if (!child)
			return sroce_odp_missing(mr, ALIGN_DOWN(va, PAGE_SIZE),
						 end, write);
		err = sroce_odp_umem_ready(mr, child, va, next - va, end,
					   write);
		if (err)
			return err;
	}
	return 0;
}

/**
 * sroce_odp_imr_va - the kernel address of implicit ODP MR memory
 * @mr: from sroce_mr_lookup(), its lock held for reading
 * @uva: where; sroce_odp_imr_ready() said its page is mapped
 * @len: bytes wanted
 * @n: how many of them are contiguous from there
 *
 * Return: the address, or NULL if its page is not mapped after all.
 */
void *sroce_odp_imr_va(struct sroce_mr *mr, u64 uva, u32 len, u32 *n)
{
	struct ib_umem_odp *child;

	child = xa_load(&sroce_odp_imr(mr)->children,
			uva >> SROCE_ODP_CHILD_SHIFT);
	return child ? sroce_odp_umem_va(child, uva, len, n) : NULL;
}

/* Pages the children of @mr map now (rdma res). */
u32 sroce_odp_imr_mapped_pages(struct sroce_mr *mr)
{
	struct ib_umem_odp *child;
	unsigned long idx;
	u32 n = 0;

	/* mr->lock keeps the children found (odp_implicit.h). */
	read_lock_bh(&mr->lock);
	xa_for_each(&sroce_odp_imr(mr)->children, idx, child)
		n += READ_ONCE(child->npages);
	read_unlock_bh(&mr->lock);
	return n;
}
