/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel-version compatibility for sroce built out of tree.
 *
 * Every difference between the kernels sroce supports (Debian's 6.1 and
 * 6.12) lives here and nowhere else, so the driver reads as if it were
 * written against a single kernel.  Inside a kernel tree this header
 * reduces to nothing.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/*
 * 6.12 passes create_cq the whole attribute bundle (NULL for kernel CQs);
 * 6.1 passes the driver udata.  SROCE_CREATE_CQ_ARG is the parameter type
 * and sroce_cq_udata() recovers the udata from it.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define SROCE_CREATE_CQ_ARG struct uverbs_attr_bundle
static inline struct ib_udata *sroce_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define SROCE_CREATE_CQ_ARG struct ib_udata
static inline struct ib_udata *sroce_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/* 6.12 records that a device name came from the user (rdma link add). */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
static inline void ib_mark_name_assigned_by_user(struct ib_device *ibdev)
{
}
#endif

/*
 * 6.12 names the virt DMA convention (dma_device NULL: a DMA address is
 * the kernel virtual address); 6.1 open-codes it.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
#include <linux/mm.h>

static inline void *ib_virt_dma_to_ptr(u64 dma_addr)
{
	return (void *)(uintptr_t)dma_addr;
}

static inline struct page *ib_virt_dma_to_page(u64 dma_addr)
{
	return virt_to_page(ib_virt_dma_to_ptr(dma_addr));
}
#endif

/* 6.3 made vma->vm_flags read-only behind helpers. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
#include <linux/mm.h>

static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/*
 * The IBTA memory placement extensions (ATOMIC WRITE, FLUSH) came with
 * 6.2.  librxe 44 posts ATOMIC WRITE through the user send ring whatever
 * the kernel, and newer librxe posts FLUSH, so sroce speaks both on 6.1
 * too, with 6.12's values: the user ABI numbers (IB_UVERBS_WR_*,
 * IB_UVERBS_WC_*, IB_UVERBS_DEVICE_*, IB_UVERBS_ACCESS_*, IB_FLUSH_*), and
 * the layout of the FLUSH work request in the send ring, which 6.1's
 * rdma_user_rxe.h lacks.  6.1 kernel consumers cannot post them (no
 * IB_WR_FLUSH or IB_WR_ATOMIC_WRITE of theirs): SROCE_KERNEL_PMEM_WR.
 * 6.1's core also refuses the flush access bits in a user MR
 * (IB_ACCESS_SUPPORTED), so a FLUSH to sroce on 6.1 finds no MR that
 * grants it.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
#define IB_WR_FLUSH			14
#define IB_WR_ATOMIC_WRITE		15
#define IB_WC_FLUSH			8
#define IB_WC_ATOMIC_WRITE		9
#define IB_DEVICE_FLUSH_GLOBAL		BIT_ULL(38)
#define IB_DEVICE_FLUSH_PERSISTENT	BIT_ULL(39)
#define IB_DEVICE_ATOMIC_WRITE		BIT_ULL(40)
#define IB_ACCESS_FLUSH_GLOBAL		BIT(8)
#define IB_ACCESS_FLUSH_PERSISTENT	BIT(9)
#define IB_FLUSH_GLOBAL			BIT(0)
#define IB_FLUSH_PERSISTENT		BIT(1)
#define IB_FLUSH_RANGE			0
#define IB_FLUSH_MR			1
#define SROCE_KERNEL_PMEM_WR		false

/* struct rxe_send_wr's wr.flush, as 6.12's rdma_user_rxe.h has it */
struct sroce_rxe_flush_wr {
	__aligned_u64 remote_addr;
	__u32 length;
	__u32 rkey;
	__u8 type;
	__u8 level;
};

#define sroce_wr_flush(swr)	((struct sroce_rxe_flush_wr *)&(swr)->wr)
#else
#define SROCE_KERNEL_PMEM_WR		true
#define sroce_wr_flush(swr)	(&(swr)->wr.flush)
#endif

/*
 * reg_user_mr_dmabuf's last argument: 6.12 passes the attribute bundle,
 * 6.1 the driver udata (as create_cq above).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define SROCE_REG_DMABUF_ARG struct uverbs_attr_bundle
#else
#define SROCE_REG_DMABUF_ARG struct ib_udata
#endif

/*
 * 6.2 made dma_buf_vmap() expect the buffer's reservation lock held and
 * added the _unlocked forms that take it; 6.1's dma_buf_vmap() locks by
 * itself.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
#include <linux/dma-buf.h>

static inline int dma_buf_vmap_unlocked(struct dma_buf *dmabuf,
					struct iosys_map *map)
{
	return dma_buf_vmap(dmabuf, map);
}

static inline void dma_buf_vunmap_unlocked(struct dma_buf *dmabuf,
					   struct iosys_map *map)
{
	dma_buf_vunmap(dmabuf, map);
}
#endif

/*
 * The SRQ's driver attributes in rdma res (fill_res_srq_entry) came after
 * 6.1; there "rdma res show srq" shows what the core knows only.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define SROCE_FILL_RES_SRQ_ENTRY(fn)	.fill_res_srq_entry = (fn),
#else
#define SROCE_FILL_RES_SRQ_ENTRY(fn)
#endif

/*
 * The SRQ's raw entry (fill_res_srq_entry_raw, for the netlink command
 * RDMA_NLDEV_CMD_RES_SRQ_GET_RAW) came with 6.7; 6.1's core dumps QPs,
 * CQs and MRs raw, not SRQs.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#define SROCE_FILL_RES_SRQ_ENTRY_RAW(fn)	.fill_res_srq_entry_raw = (fn),
#else
#define SROCE_FILL_RES_SRQ_ENTRY_RAW(fn)
#endif

/* 6.10 dropped __assign_str()'s source: it is the one __string() named. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define sroce_assign_str(dst, src)	__assign_str(dst)
#else
#define sroce_assign_str(dst, src)	__assign_str(dst, src)
#endif

/*
 * On-demand paging needs nothing here: rdma/ib_umem_odp.h is the same
 * file on 6.1 and 6.12 (struct ib_umem_odp with pfn_list and dma_list,
 * ib_umem_odp_get/map_dma_and_lock/unmap_dma_pages/release, and for
 * implicit ODP ib_umem_odp_alloc_implicit/alloc_child with an ops
 * argument on both), as are struct ib_odp_caps, IB_ODP_SUPPORT_IMPLICIT,
 * IBK_ON_DEMAND_PAGING (a kernel_cap_flags bit since 5.19) and the
 * advise_mr op.  (Later kernels replace dma_list with an
 * hmm_dma_map: odp.c would need a variant there.)
 */

#endif /* SROCE_COMPAT_H */
