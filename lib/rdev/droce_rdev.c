/* SPDX-License-Identifier: BSD-3-Clause */
/* The devices drivers have registered (droce_rdev_pmd.h), in probe order. */
#include <errno.h>
#include <string.h>
#include <pthread.h>

#include "droce_rdev_pmd.h"

static pthread_mutex_t rdevs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct droce_rdev *rdevs[DROCE_MAX_DEVS];

int
droce_rdev_register(struct droce_rdev *dev)
{
	int ret = -ENOSPC;

	pthread_mutex_lock(&rdevs_lock);
	for (unsigned int i = 0; i < DROCE_MAX_DEVS; i++)
		if (rdevs[i] == NULL) {
			rdevs[i] = dev;
			ret = 0;
			break;
		}
	pthread_mutex_unlock(&rdevs_lock);
	return ret;
}

void
droce_rdev_unregister(struct droce_rdev *dev)
{
	pthread_mutex_lock(&rdevs_lock);
	for (unsigned int i = 0; i < DROCE_MAX_DEVS; i++)
		if (rdevs[i] == dev)
			rdevs[i] = NULL;
	pthread_mutex_unlock(&rdevs_lock);
}

unsigned int
droce_rdev_count(void)
{
	unsigned int n = 0;

	pthread_mutex_lock(&rdevs_lock);
	for (unsigned int i = 0; i < DROCE_MAX_DEVS; i++)
		n += rdevs[i] != NULL;
	pthread_mutex_unlock(&rdevs_lock);
	return n;
}

struct droce_rdev *
droce_rdev_get(unsigned int idx)
{
	struct droce_rdev *dev = NULL;

	pthread_mutex_lock(&rdevs_lock);
	for (unsigned int i = 0; i < DROCE_MAX_DEVS && dev == NULL; i++)
		if (rdevs[i] != NULL && idx-- == 0)
			dev = rdevs[i];
	pthread_mutex_unlock(&rdevs_lock);
	return dev;
}

struct droce_rdev *
droce_rdev_by_name(const char *name)
{
	struct droce_rdev *dev = NULL;

	pthread_mutex_lock(&rdevs_lock);
	for (unsigned int i = 0; i < DROCE_MAX_DEVS && dev == NULL; i++)
		if (rdevs[i] != NULL && strcmp(rdevs[i]->name, name) == 0)
			dev = rdevs[i];
	pthread_mutex_unlock(&rdevs_lock);
	return dev;
}
