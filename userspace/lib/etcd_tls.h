// TLS towards etcd's members (Documentation/etcd.md, "TLS"): the files the
// client presents and trusts, and what a TLS failure means in words an
// admin can act on, with curl's own reason.
#ifndef CHORUS_LIB_ETCD_TLS_H_
#define CHORUS_LIB_ETCD_TLS_H_

#include <string>
#include <string_view>

#include <curl/curl.h>

namespace chorus {

struct EtcdTls {
    // The CA certificates (PEM) that sign the members' certificates;
    // empty: the system's CA store.
    std::string ca_file;
    // This client's certificate and key (PEM), for members that check
    // client certificates (etcd --client-cert-auth); empty: none.
    std::string cert_file;
    std::string key_file;
};

// "" when path can be opened for reading and is not a directory, else why not:
// "cannot read '/etc/x.crt': No such file or directory".
std::string UnreadableFile(const std::string& path);

// Why the PEM certificate in path is not valid now ("it expired on
// 2020-01-02 00:00:00 UTC", "it is not valid before ..."); "" when it is
// valid now or cannot be read (curl says so then).
std::string CertificateNotValidNow(const std::string& path);

// What happened to one transfer that curl failed.
struct CurlFailure {
    std::string reason;  // for the log and EtcdUnreachableError
    // A TLS failure: certificates or keys that will not change within a
    // call, so trying again is pointless (another endpoint may still work).
    bool tls = false;
};

// What happened to one transfer that curl failed, for the log and
// EtcdUnreachableError. On an https endpoint the TLS failures are named
// ("TLS: the member's certificate failed verification: ...", "TLS: the
// member ended the connection after the handshake, as etcd does when it
// refuses a client certificate: ...") with what this client can tell
// about why; anything else is curl's reason as it is. handshake_done:
// curl completed the TLS handshake of a new connection for this transfer
// (CURLINFO_APPCONNECT_TIME_T > 0 and CURLINFO_NUM_CONNECTS > 0).
CurlFailure DescribeCurlFailure(CURLcode code, std::string_view curl_reason, bool https,
                                bool handshake_done, const EtcdTls& tls);

// Sets the TLS options of an easy handle: the protocols (http and https),
// the CA file and the client certificate and key when given.
void SetTlsOptions(CURL* easy, const EtcdTls& tls);

}  // namespace chorus

#endif  // CHORUS_LIB_ETCD_TLS_H_
