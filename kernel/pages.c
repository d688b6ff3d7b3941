// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: payload pages, recycled.
 *
 * A message's payload (a write the replica applies, a forwarded write, a
 * read's data) is read into pages of its own, which the bio that writes
 * them, or the reply that sends them, gives back when done. Fresh pages
 * from the page allocator cost a clear each where init_on_alloc is on
 * (Debian's default: CONFIG_INIT_ON_ALLOC_DEFAULT_ON), 4 KiB of stores per
 * page for data about to be overwritten. So pages given back are kept, up
 * to CHORUS_PAGE_POOL_MAX, and taken again before the allocator is asked;
 * DRBD's receiver keeps its pages the same way (drbd_alloc_pages()).
 *
 * A recycled page holds an earlier payload. That never leaves the kernel:
 * every user fills the bytes it uses (a receive, a disk read) before it
 * reads or sends them, and only those bytes. A page the network still
 * holds (a reply sent with sendpage, not yet acknowledged by TCP) has a
 * reference besides ours and is freed, not kept: reusing it would change
 * data TCP may still retransmit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "chorus.h"

/* 4 MiB: a 256 KiB write at depth 8 to each of two peers, twice over. */
#define CHORUS_PAGE_POOL_MAX	1024

static DEFINE_SPINLOCK(chorus_page_pool_lock);
/* Pages kept, [0, chorus_page_pool_nr); under chorus_page_pool_lock. */
static struct page *chorus_page_pool[CHORUS_PAGE_POOL_MAX];
static unsigned int chorus_page_pool_nr;	/* under chorus_page_pool_lock */

/**
 * chorus_pages_alloc() - an array of @nr pages for a payload
 * @nr: pages wanted
 * @gfp: allocation flags (GFP_NOIO on I/O paths)
 *
 * Kept pages first, then the page allocator's bulk path. Their contents are
 * undefined: the caller fills what it uses.
 *
 * Context: process context when @gfp may sleep; any otherwise.
 * Return: the array, with its pages, for chorus_pages_free(); NULL if
 * memory ran out (nothing is left allocated).
 */
struct page **chorus_pages_alloc(unsigned int nr, gfp_t gfp)
{
	struct page **pages = kcalloc(nr, sizeof(*pages), gfp);
	unsigned long flags;
	unsigned int i, n;

	if (!pages)
		return NULL;
	spin_lock_irqsave(&chorus_page_pool_lock, flags);
	n = min(nr, chorus_page_pool_nr);
	for (i = 0; i < n; i++)
		pages[i] = chorus_page_pool[--chorus_page_pool_nr];
	spin_unlock_irqrestore(&chorus_page_pool_lock, flags);
	/* Fills the NULL entries only. */
	if (n < nr && alloc_pages_bulk_array(gfp, nr, pages) < nr) {
		for (i = n; i < nr; i++) {
			if (!pages[i])
				pages[i] = alloc_page(gfp);
			if (!pages[i]) {
				chorus_pages_free(pages, nr);
				return NULL;
			}
		}
	}
	return pages;
}

/**
 * chorus_pages_free() - give back an array of pages and free the array
 * @pages: the array, with NULL for pages never allocated; may be NULL
 * @nr: entries
 *
 * Each page is kept for chorus_pages_alloc() or freed; any order-0 page of
 * ours may come here, wherever it was allocated. One lock for the array:
 * the pages that fit and that nobody else holds are kept, the rest dropped
 * after the lock.
 *
 * Context: any.
 */
void chorus_pages_free(struct page **pages, unsigned int nr)
{
	unsigned long flags;
	unsigned int i;

	if (!pages)
		return;
	spin_lock_irqsave(&chorus_page_pool_lock, flags);
	for (i = 0; i < nr && chorus_page_pool_nr < CHORUS_PAGE_POOL_MAX; i++) {
		if (!pages[i] || page_ref_count(pages[i]) != 1)
			continue;
		chorus_page_pool[chorus_page_pool_nr++] = pages[i];
		pages[i] = NULL;
	}
	spin_unlock_irqrestore(&chorus_page_pool_lock, flags);
	for (i = 0; i < nr; i++)
		if (pages[i])
			put_page(pages[i]);
	kfree(pages);
}

/**
 * chorus_pages_exit() - free the kept pages
 *
 * Context: module exit, with no volume left (nothing gives pages back).
 */
void chorus_pages_exit(void)
{
	unsigned long flags;

	spin_lock_irqsave(&chorus_page_pool_lock, flags);
	while (chorus_page_pool_nr)
		__free_page(chorus_page_pool[--chorus_page_pool_nr]);
	spin_unlock_irqrestore(&chorus_page_pool_lock, flags);
}
