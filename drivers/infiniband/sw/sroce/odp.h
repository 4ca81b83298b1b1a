/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * On-demand paging (odp.c): user MRs registered with IB_ACCESS_ON_DEMAND
 * pin nothing; their pages are faulted in when the data path first
 * touches them and let go when the MM takes them away.
 *
 * The pages.  ib_umem_odp keeps, per page of the MR (per huge page with
 * IB_ACCESS_HUGETLB), a "DMA address" in dma_list[] with the rights it
 * was mapped for in its low bits (ODP_READ_ALLOWED_BIT,
 * ODP_WRITE_ALLOWED_BIT); 0 while the page is not mapped.  sroce uses
 * virt DMA (ib_uses_virt_dma(): no dma_device), so that address is the
 * page's address in the kernel's direct map, page_address(), which the
 * CPU reaches as it is (no kmap: sroce needs !HIGHMEM, as
 * CONFIG_INFINIBAND_VIRT_DMA does).
 *
 * Who changes dma_list[].  A fault (ib_umem_odp_map_dma_and_lock(),
 * which calls hmm_range_fault() and may sleep) sets entries, in process
 * context only: the fault work item or advise_mr.  The MR's mmu interval
 * notifier (sroce_odp_invalidate()) clears them, before the MM lets the
 * pages go (munmap, madvise(MADV_DONTNEED), fork's write protection,
 * migration, reclaim).  Both hold the umem's umem_mutex, which the data
 * path cannot take; so the invalidation also takes mr->lock for writing
 * around the clearing, and every data path access holds mr->lock for
 * reading from its lookup to its put (mr.h): an access that saw a page
 * mapped keeps it mapped until it is done, and the invalidation returns,
 * letting the MM free the pages, only after.  A fault sets an entry
 * without mr->lock (one aligned store): an access sees the page either
 * not mapped yet (and asks again) or mapped.
 *
 * The data path never faults (engine.h: it may not sleep).  Before it
 * touches ODP memory it checks that every page of the range is mapped
 * with the rights it needs (sroce_odp_ready()).  If one is not, it queues
 * a fault for the range from that page on (at most SROCE_ODP_FAULT_CHUNK
 * bytes) on the device's fault queue and gets -EAGAIN; what each part of
 * the engine does with that is in Documentation/sroce.rst ("On-demand
 * paging"): the responder answers an RNR NAK (SEND, WRITE, READ and
 * atomic requests), the requester and the completer wait on the RNR timer
 * (a local SGE; a READ response or atomic ACK to place is dropped and
 * asked for again), UC and UD drop the message.  A fault that fails
 * (nothing mapped there, or no write permission) is remembered in the MR
 * for its page (@odp_err_va) until an access to that page takes it, for
 * SROCE_ODP_ERR_KEEP at most: that access fails with -EFAULT, a
 * protection or remote access error, rather than ask again forever.
 *
 * The fault queue.  One per device, at most SROCE_ODP_FAULT_MAX entries
 * (a peer can make faults happen); a fault that does not fit, or finds
 * no memory, is dropped and counted (odp_fault_drops): the access asks
 * again after its wait.  An entry names its MR by key, so it holds no
 * reference: the work item looks the MR up, and one deregistered
 * meanwhile is simply not found.  The work item holds the MR (a lookup
 * reference) only while it faults it; dereg_mr waits for that, and
 * device removal cancels the work and frees what is queued.
 *
 * Implicit ODP MRs (the whole address space) keep their pages in
 * children made on demand: odp_implicit.h.  To the data path a missing
 * child is a missing page.
 */
#ifndef SROCE_ODP_H
#define SROCE_ODP_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

struct ib_umem;
struct ib_umem_odp;
struct mmu_interval_notifier_ops;
struct sroce_dev;
struct sroce_mr;

/* Faults waiting at most; and the most one data path fault maps. */
#define SROCE_ODP_FAULT_MAX	64
#define SROCE_ODP_FAULT_CHUNK	SZ_1M
/*
 * How long the requester and the completer wait for a fault before they
 * try again: the RNR timer code of 0.01 ms, the next tick (timers.h).
 */
#define SROCE_ODP_WAIT_CODE	1
/* How long a failed fault is kept for the access that asked for it. */
#define SROCE_ODP_ERR_KEEP	(2 * HZ)

/**
 * struct sroce_odp_queue - a device's faults waiting for process context
 * @lock: protects @list and @len; taken from the engine (BHs off)
 * @list: struct sroce_odp_fault entries, oldest first
 * @len: entries in @list, at most SROCE_ODP_FAULT_MAX
 * @dead: the device is going: queue nothing more
 * @work: faults what is queued
 * @children: children of implicit ODP MRs the device has, at most
 *	SROCE_ODP_CHILDREN_MAX (odp_implicit.h)
 */
struct sroce_odp_queue {
	spinlock_t lock;	/* @list, @len, @dead */
	struct list_head list;
	unsigned int len;
	bool dead;
	struct work_struct work;
	atomic_t children;
};

/*
 * reg_user_mr's implicit ODP MR: the whole address space (start 0,
 * length U64_MAX; iova 0).
 */
static inline bool sroce_odp_implicit(int access, u64 start, u64 length,
				      u64 iova)
{
	return (access & IB_ACCESS_ON_DEMAND) && !start &&
	       length == U64_MAX && !iova;
}

void sroce_odp_dev_init(struct sroce_dev *sdev);
void sroce_odp_set_caps(struct ib_device_attr *a);
void sroce_odp_dev_destroy(struct sroce_dev *sdev);

struct ib_umem *sroce_odp_get(struct ib_device *ibdev, u64 start, u64 length,
			      int access);
void sroce_odp_attach(struct sroce_mr *mr, struct ib_umem *umem);
void sroce_odp_umem_release(struct ib_umem *umem);
int sroce_odp_ready(struct sroce_mr *mr, u64 iova, u64 len, bool write);
void *sroce_odp_va(struct sroce_mr *mr, u64 iova, u32 len, u32 *n);
u32 sroce_odp_mapped_pages(struct sroce_mr *mr);
int sroce_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs);

/*
 * How sroce_odp_fault_range() maps a range: MAP_FAULT faults in what is
 * not present (without it, only what is present is mapped: advise_mr's
 * PREFETCH_NO_FAULT); MAP_ACCESS says a data path access waits for it,
 * so a page that cannot be had is remembered for that access (a prefetch
 * leaves nothing behind for an access that did not ask).
 */
#define SROCE_ODP_MAP_FAULT	BIT(0)
#define SROCE_ODP_MAP_ACCESS	BIT(1)

/* For odp_implicit.c: the same per-umem work on an implicit MR's children. */
extern const struct mmu_interval_notifier_ops sroce_odp_notifier_ops;
void sroce_odp_set_err(struct sroce_mr *mr, u64 va);
int sroce_odp_missing(struct sroce_mr *mr, u64 uva, u64 end, bool write);
int sroce_odp_umem_ready(struct sroce_mr *mr, struct ib_umem_odp *odp,
			 u64 uva, u64 len, u64 end, bool write);
void *sroce_odp_umem_va(struct ib_umem_odp *odp, u64 uva, u32 len, u32 *n);
int sroce_odp_fault_range(struct sroce_mr *mr, struct ib_umem_odp *odp,
			  u64 va, u64 len, bool write, unsigned int how);

#endif /* SROCE_ODP_H */
