// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: /sys/block/chorusN/chorus/, the
 * identity, state and counters of a volume. The group is added with the
 * disk, before its uevent, so udev rules can read "name".
 */
#include <linux/blkdev.h>
#include <linux/device.h>
#include <linux/sysfs.h>

#include "chorus.h"

static struct chorus_volume *chorus_dev_to_volume(struct device *dev)
{
	return dev_to_disk(dev)->private_data;
}

static ssize_t chorus_name_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", chorus_dev_to_volume(dev)->name);
}

static ssize_t chorus_uuid_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%pUb\n", &chorus_dev_to_volume(dev)->uuid);
}

static ssize_t chorus_incarnation_show(struct device *dev,
				       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%016llx\n",
			  chorus_dev_to_volume(dev)->incarnation);
}

static ssize_t chorus_backing_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", chorus_dev_to_volume(dev)->backing.path);
}

static const char * const chorus_state_names[] = {
	[CHORUS_VOLUME_STATE_UNSPEC]	= "unknown",
	[CHORUS_VOLUME_STATE_ONLINE]	= "online",
	[CHORUS_VOLUME_STATE_FAILED]	= "failed",
};

static ssize_t chorus_state_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	enum chorus_volume_state state =
		chorus_volume_state(chorus_dev_to_volume(dev));

	if (state >= ARRAY_SIZE(chorus_state_names))
		state = CHORUS_VOLUME_STATE_UNSPEC;
	return sysfs_emit(buf, "%s\n", chorus_state_names[state]);
}

static ssize_t chorus_stat_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	const struct chorus_stat_desc *desc =
		container_of(attr, struct dev_ext_attribute, attr)->var;
	struct chorus_stats sum;

	chorus_volume_stats(chorus_dev_to_volume(dev), &sum);
	return sysfs_emit(buf, "%llu\n", chorus_stat_value(&sum, desc));
}

#define CHORUS_ATTR_RO(_name)						\
	static struct device_attribute chorus_attr_##_name =		\
		__ATTR(_name, 0444, chorus_##_name##_show, NULL)

CHORUS_ATTR_RO(name);
CHORUS_ATTR_RO(uuid);
CHORUS_ATTR_RO(incarnation);
CHORUS_ATTR_RO(backing);
CHORUS_ATTR_RO(state);

#define CHORUS_NR_FIXED_ATTRS	5

/* One file per counter of chorus_stat_descs, filled in by chorus_sysfs_init(). */
static struct dev_ext_attribute chorus_stat_attrs[CHORUS_NR_STATS];

static struct attribute *chorus_volume_attrs[CHORUS_NR_FIXED_ATTRS +
					     CHORUS_NR_STATS + 1] = {
	&chorus_attr_name.attr,
	&chorus_attr_uuid.attr,
	&chorus_attr_incarnation.attr,
	&chorus_attr_backing.attr,
	&chorus_attr_state.attr,
};

static const struct attribute_group chorus_volume_group = {
	.name	= "chorus",
	.attrs	= chorus_volume_attrs,
};

const struct attribute_group *chorus_disk_groups[] = {
	&chorus_volume_group,
	NULL,
};

/**
 * chorus_sysfs_init() - build the counter files from chorus_stat_descs
 *
 * Context: module init, before any volume exists.
 */
void chorus_sysfs_init(void)
{
	int i;

	for (i = 0; i < CHORUS_NR_STATS; i++) {
		struct dev_ext_attribute *ea = &chorus_stat_attrs[i];

		ea->attr.attr.name = chorus_stat_descs[i].name;
		ea->attr.attr.mode = 0444;
		ea->attr.show = chorus_stat_show;
		ea->var = (void *)&chorus_stat_descs[i];
		chorus_volume_attrs[CHORUS_NR_FIXED_ATTRS + i] = &ea->attr.attr;
	}
}
