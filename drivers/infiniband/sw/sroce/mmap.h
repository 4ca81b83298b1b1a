/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Mapping user rings (mmap.c): the entries librxe finds by offset.
 */
#ifndef SROCE_MMAP_H
#define SROCE_MMAP_H

#include <linux/types.h>

struct ib_ucontext;
struct rdma_user_mmap_entry;
struct sroce_mmap_entry;
struct vm_area_struct;

struct sroce_mmap_entry *sroce_mmap_entry_create(struct ib_ucontext *uctx,
						 void *buf, size_t size);
void sroce_mmap_entry_remove(struct sroce_mmap_entry *entry);
u64 sroce_mmap_entry_offset(const struct sroce_mmap_entry *entry);
int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void sroce_mmap_free(struct rdma_user_mmap_entry *rdma_entry);

#endif /* SROCE_MMAP_H */
