// One scrape of chorusd's metrics: the kernel's volumes read over netlink
// now, and the daemon's health.
#ifndef CHORUS_CHORUSD_METRICS_SCRAPE_H_
#define CHORUS_CHORUSD_METRICS_SCRAPE_H_

#include <atomic>
#include <string>

#include "chorusd/log.h"
#include "chorusd/session_keeper.h"
#include "lib/config.h"

namespace chorus {

// The exposition text. keeper is the session keeper once there is one
// (with a [cluster] section), null before. A kernel that does not answer
// is reported as chorus_kernel_up 0, not as a failed scrape.
std::string ScrapeNode(const Config& cfg, const std::atomic<const SessionKeeper*>& keeper,
                       const Logger& log);

}  // namespace chorus

#endif  // CHORUS_CHORUSD_METRICS_SCRAPE_H_
