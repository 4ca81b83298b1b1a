/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Implicit ODP (odp_implicit.c): one ODP MR over the whole user address
 * space, ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND), that is
 * reg_user_mr with start 0, length U64_MAX and iova 0.  Its lkey/rkey
 * reach any address below the registering process's TASK_SIZE (an
 * access above it fails, as one past an explicit MR's end).
 *
 * The MR's umem is ib_umem_odp_alloc_implicit()'s root: no pages, no
 * notifier, only the process's mm.  The pages are kept by children,
 * ib_umem_odp_alloc_child() umems of SROCE_ODP_CHILD_SIZE bytes aligned
 * to their size, each with its own mmu interval notifier (the same
 * invalidation as an explicit ODP MR, odp.h, under the parent's
 * mr->lock), in @children by address >> SROCE_ODP_CHILD_SHIFT.
 *
 * Why 16 MiB.  ib_umem_odp gives each child 16 bytes per 4 KiB page
 * (pfn_list and dma_list), allocated whole when the child is made:
 * mlx5's 1 GiB child would cost 4 MiB to map one page, 16 MiB costs
 * 64 KiB.  Smaller ones would make a large buffer many notifiers (each
 * an interval-tree node the MM walks on every invalidation) and a fault
 * of SROCE_ODP_FAULT_CHUNK more often span two of them; 16 MiB is 16
 * data path faults.
 *
 * Who makes and unmakes children.  Only process context, under
 * @lock: the fault work item and advise_mr make them when a fault
 * reaches an address no child covers, then fault the pages; the data
 * path only looks them up (xa_load, no allocation, no sleep): a missing
 * child is a missing page to it, -EAGAIN and a fault queued (odp.h).
 * A child goes
 *  - when a fault leaves it with no page mapped (nothing there);
 *  - after an invalidation unmaps its last page (munmap, madvise, fork,
 *    migration): the notifier cannot remove itself, so it queues
 *    @reap_work, which removes the children still empty (as mlx5 does
 *    from its invalidation);
 *  - when the device-wide cap is reached: the faulting MR's empty
 *    children first; if none, the new child is refused
 *    (odp_implicit_refused) and the access fails as at an unmapped
 *    address, rather than retry forever;
 *  - on dereg_mr, all of them, before the root.
 * Removal erases the child from @children, then takes mr->lock for
 * writing once: an access that found the child holds mr->lock for
 * reading until its put, so after that none can use it, and its
 * notifier and pages go (ib_umem_odp_release()).
 *
 * Locks: @lock -> mmap_lock -> a child's umem_mutex -> mr->lock.  The
 * notifier takes neither @lock nor the xarray's lock.
 */
#ifndef SROCE_ODP_IMPLICIT_H
#define SROCE_ODP_IMPLICIT_H

#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

struct ib_device;
struct ib_umem_odp;
struct sroce_mr;

/* The span of a child, and how many children a device has at most. */
#define SROCE_ODP_CHILD_SHIFT	24
#define SROCE_ODP_CHILD_SIZE	BIT_ULL(SROCE_ODP_CHILD_SHIFT)
#define SROCE_ODP_CHILDREN_MAX	1024

/**
 * struct sroce_odp_imr - what an implicit ODP MR keeps besides its root
 * @lock: children are made, faulted and removed under it
 * @children: index address >> SROCE_ODP_CHILD_SHIFT -> struct
 *	ib_umem_odp; the data path reads it under RCU and mr->lock
 * @reap_work: removes children an invalidation left empty
 * @mr: the MR, from sroce_odp_imr_attach() on
 * @limit: the end of the user address space (TASK_SIZE at registration)
 * @dying: dereg_mr tears it down; reap nothing (under @lock)
 */
struct sroce_odp_imr {
	struct mutex lock;	/* @children changes, faults, @dying */
	struct xarray children;
	struct work_struct reap_work;
	struct sroce_mr *mr;
	u64 limit;
	bool dying;
};

struct ib_umem_odp *sroce_odp_imr_get(struct ib_device *ibdev, int access);
void sroce_odp_imr_attach(struct sroce_mr *mr, struct ib_umem_odp *root);
void sroce_odp_imr_release(struct ib_umem_odp *root);
int sroce_odp_imr_ready(struct sroce_mr *mr, u64 uva, u64 len, bool write);
void *sroce_odp_imr_va(struct sroce_mr *mr, u64 uva, u32 len, u32 *n);
int sroce_odp_imr_fault(struct sroce_mr *mr, u64 va, u64 len, bool write,
			unsigned int how);
void sroce_odp_imr_emptied(struct sroce_mr *mr);
u32 sroce_odp_imr_mapped_pages(struct sroce_mr *mr);

#endif /* SROCE_ODP_IMPLICIT_H */
