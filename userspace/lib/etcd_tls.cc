#include "lib/etcd_tls.h"

#include <fcntl.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>

namespace chorus {

namespace {

struct FileCloser {
    void operator()(FILE* f) const { std::fclose(f); }
};
struct X509Deleter {
    void operator()(X509* cert) const { X509_free(cert); }
};

std::string FormatAsn1Time(const ASN1_TIME* t) {
    std::tm tm{};
    if (ASN1_TIME_to_tm(t, &tm) != 1)
        return "(an unreadable date)";
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
    return buf;
}

bool Contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

// What this client can tell about why a member refused it: no certificate
// at all, or one that is not valid now; else the member's trust is the
// likely cause, which only the member's log can confirm.
std::string ClientCertificateHint(const EtcdTls& tls) {
    if (tls.cert_file.empty())
        return "no client certificate is configured (etcd_cert_file and etcd_key_file)";
    if (std::string why = CertificateNotValidNow(tls.cert_file); !why.empty())
        return "the client certificate " + tls.cert_file + " is not valid now: " + why;
    return "is the client certificate " + tls.cert_file +
           " signed by a CA in the member's --trusted-ca-file? (the member's log says why)";
}

// The member's certificate failed verification: curl's reason says which
// check, the hint says what to look at.
std::string ServerCertificateHint(std::string_view reason) {
    if (Contains(reason, "expired"))
        return "the member's certificate has expired";
    if (Contains(reason, "subject name") || Contains(reason, "does not match"))
        return "the member's certificate does not name the endpoint's host; its names "
               "(subjectAltName) must include the host in the endpoint";
    return "etcd_ca_file must hold the CA that signed the members' certificates";
}

}  // namespace

std::string UnreadableFile(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return "cannot read '" + path + "': " + std::strerror(errno);
    struct stat st;
    bool dir = ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
    ::close(fd);
    return dir ? "cannot read '" + path + "': it is a directory" : "";
}

std::string CertificateNotValidNow(const std::string& path) {
    std::unique_ptr<FILE, FileCloser> f(std::fopen(path.c_str(), "re"));
    if (!f)
        return "";
    std::unique_ptr<X509, X509Deleter> cert(PEM_read_X509(f.get(), nullptr, nullptr, nullptr));
    if (!cert)
        return "";
    if (X509_cmp_current_time(X509_get0_notAfter(cert.get())) < 0)
        return "it expired on " + FormatAsn1Time(X509_get0_notAfter(cert.get()));
    if (X509_cmp_current_time(X509_get0_notBefore(cert.get())) > 0)
        return "it is not valid before " + FormatAsn1Time(X509_get0_notBefore(cert.get()));
    return "";
}

CurlFailure DescribeCurlFailure(CURLcode code, std::string_view curl_reason, bool https,
                                bool handshake_done, const EtcdTls& tls) {
    std::string reason(curl_reason);
    if (!https)
        return {reason, false};
    auto tls_failure = [&reason](const std::string& what) {
        return CurlFailure{"TLS: " + what + " (curl: " + reason + ")", true};
    };
    switch (code) {
        case CURLE_PEER_FAILED_VERIFICATION:
            return tls_failure("the member's certificate failed verification: " +
                               ServerCertificateHint(reason));
        case CURLE_SSL_CACERT_BADFILE:
            return tls_failure("cannot use the CA file " +
                               (tls.ca_file.empty() ? "(the system's)" : tls.ca_file));
        case CURLE_SSL_CERTPROBLEM:
            return tls_failure("cannot use the client certificate " + tls.cert_file +
                               " or its key " + tls.key_file);
        case CURLE_SSL_CONNECT_ERROR:
            if (Contains(reason, "alert"))
                return tls_failure("the member refused the handshake: " +
                                   ClientCertificateHint(tls));
            return tls_failure("the handshake failed (is the endpoint an https one?)");
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING:
            // TLS 1.3: the client's side of the handshake is over before
            // the member has checked the client's certificate; a refusal
            // then shows as an alert or a reset on the first request.
            if (handshake_done || Contains(reason, "alert"))
                return tls_failure(
                    "the member ended the connection after the handshake, as etcd does when it "
                    "refuses a client certificate: " +
                    ClientCertificateHint(tls));
            return {reason, false};
        default:
            return {reason, false};
    }
}

void SetTlsOptions(CURL* easy, const EtcdTls& tls) {
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    // Verification stays on (curl's default); without a CA file curl uses
    // the system's store.
    if (!tls.ca_file.empty())
        curl_easy_setopt(easy, CURLOPT_CAINFO, tls.ca_file.c_str());
    if (!tls.cert_file.empty()) {
        curl_easy_setopt(easy, CURLOPT_SSLCERT, tls.cert_file.c_str());
        curl_easy_setopt(easy, CURLOPT_SSLKEY, tls.key_file.c_str());
    }
}

}  // namespace chorus
