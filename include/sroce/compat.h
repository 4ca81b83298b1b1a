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

#endif /* SROCE_COMPAT_H */
