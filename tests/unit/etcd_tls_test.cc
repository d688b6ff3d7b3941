// The etcd client over TLS against a real etcd 3.4 that wants client
// certificates (--client-cert-auth), with certificates from
// tools/etcd-tls/make-lab-ca, made once at build time
// (tests/unit/CMakeLists.txt): a good client certificate works end to end,
// and every way TLS can fail says which, naming the endpoint and curl's
// reason.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <mutex>
#include <regex>
#include <string>

#include "etcd_server.h"
#include "lib/config.h"
#include "lib/etcd_client.h"
#include "lib/etcd_curl.h"
#include "lib/etcd_watch.h"
#include "test_util.h"

namespace chorus {
namespace {

using std::chrono::milliseconds;

// make-lab-ca's output: "main" signs the member's certificate (for
// 127.0.0.1 only) and the clients "good" and "old" (expired); "other" is
// another CA with its client "stranger".
const std::string kMain = CHORUS_ETCD_TLS_DIR "/main";
const std::string kOther = CHORUS_ETCD_TLS_DIR "/other";

EtcdTls Client(const std::string& name, const std::string& ca = kMain + "/ca.crt",
               const std::string& dir = kMain) {
    return {ca, dir + "/client-" + name + ".crt", dir + "/client-" + name + ".key"};
}

class EtcdTlsTest : public ::testing::Test {
protected:
    // The default timeouts: a call every endpoint refuses for TLS ends
    // after one round, long before its deadline.
    EtcdOptions Options(EtcdTls tls) {
        EtcdOptions o = etcd_.Options();
        o.tls = std::move(tls);
        o.log = [this](Severity, const std::string& msg) {
            std::lock_guard<std::mutex> lock(log_mutex_);
            log_ += msg + "\n";
        };
        return o;
    }
    std::string Log() {
        std::lock_guard<std::mutex> lock(log_mutex_);
        return log_;
    }

    // Expects a Range through options to fail with a message that names
    // the endpoint and matches pattern.
    void ExpectRefused(const EtcdOptions& options, const std::string& pattern) {
        EtcdClient client(options);
        const auto start = std::chrono::steady_clock::now();
        try {
            client.Range(EtcdKeys::Key("k"));
            ADD_FAILURE() << "no error, expected /" << pattern << "/";
        } catch (const EtcdUnreachableError& e) {
            EXPECT_LT(std::chrono::steady_clock::now() - start, options.call_timeout / 2)
                << "a TLS refusal waited for the call's deadline";
            std::string what = e.what();
            EXPECT_NE(what.find(options.endpoints[0] + ": TLS: "), std::string::npos) << what;
            EXPECT_TRUE(std::regex_search(what, std::regex(pattern)))
                << "message: " << what << "\nexpected: /" << pattern << "/";
        }
    }

    test::EtcdCluster etcd_{1,
                            test::EtcdServerTls{kMain + "/member-m0.crt", kMain + "/member-m0.key",
                                                kMain + "/ca.crt", Client("good")}};
    std::mutex log_mutex_;
    std::string log_;
};

TEST_F(EtcdTlsTest, AGoodClientCertificatePutsGetsAndWatches) {
    EtcdOptions options = Options(Client("good"));
    ASSERT_EQ(options.endpoints[0].rfind("https://127.0.0.1:", 0), 0u);
    EtcdClient client(options);
    int64_t rev = client.Put("tls/a", "1");
    EtcdRangeResult got = client.Range(EtcdKeys::Key("tls/a"));
    ASSERT_EQ(got.kvs.size(), 1u);
    EXPECT_EQ(got.kvs[0].value, "1");

    EtcdWatch watch(options, EtcdKeys::Prefix("tls/"), rev);
    client.Put("tls/b", "2");
    std::vector<std::string> seen;
    for (int i = 0; i < 25 && seen.size() < 2; ++i)
        for (const EtcdEvent& e : watch.Next(milliseconds(200)))
            seen.push_back(e.kv.key + "=" + e.kv.value);
    EXPECT_EQ(seen, (std::vector<std::string>{"tls/a=1", "tls/b=2"}));
    EXPECT_EQ(Log(), "");
}

TEST_F(EtcdTlsTest, NoClientCertificateIsNamed) {
    ExpectRefused(Options({kMain + "/ca.crt", "", ""}),
                  "TLS: the member (ended the connection after the handshake|refused the "
                  "handshake).*: no client certificate is configured \\(etcd_cert_file and "
                  "etcd_key_file\\) \\(curl: ");
}

TEST_F(EtcdTlsTest, AnExpiredClientCertificateIsNamedWithItsDate) {
    ExpectRefused(Options(Client("old")),
                  "TLS: the member .*: the client certificate .*/client-old\\.crt is not valid "
                  "now: it expired on 2020-01-02 00:00:00 UTC \\(curl: ");
}

TEST_F(EtcdTlsTest, AClientCertificateOfAnotherCa) {
    ExpectRefused(Options(Client("stranger", kMain + "/ca.crt", kOther)),
                  "TLS: the member .*: is the client certificate .*/client-stranger\\.crt signed "
                  "by a CA in the member's --trusted-ca-file\\?");
}

TEST_F(EtcdTlsTest, TheMembersCertificateFromAnotherCa) {
    ExpectRefused(Options(Client("good", kOther + "/ca.crt")),
                  "TLS: the member's certificate failed verification: etcd_ca_file must hold the "
                  "CA that signed the members' certificates \\(curl: SSL certificate problem: "
                  "unable to get local issuer certificate\\)");
}

TEST_F(EtcdTlsTest, TheMembersCertificateForAnotherName) {
    // The member's certificate names 127.0.0.1 only.
    EtcdOptions options = Options(Client("good"));
    options.endpoints[0].replace(0, std::string("https://127.0.0.1").size(), "https://localhost");
    ExpectRefused(options,
                  "TLS: the member's certificate failed verification: the member's certificate "
                  "does not name the endpoint's host.*\\(curl: .*'localhost'\\)");
}

// A member that fails TLS is one failed attempt: the next endpoint serves
// the call.
TEST_F(EtcdTlsTest, ATlsFailureFailsOverToTheNextEndpoint) {
    EtcdOptions options = Options(Client("good"));
    std::string good = options.endpoints[0];
    options.endpoints = {"https://localhost" + good.substr(good.rfind(':')), good};
    EtcdClient client(options);
    EXPECT_NO_THROW(client.Put("tls/x", "1"));
    EXPECT_NE(Log().find("etcd " + options.endpoints[0] + ": kv/put failed: TLS: "),
              std::string::npos)
        << Log();
}

TEST_F(EtcdTlsTest, AWatchLogsAndThrowsTheTlsReason) {
    EtcdWatch watch(Options(Client("old")), EtcdKeys::Prefix("tls/"), 0);
    try {
        watch.Next(milliseconds(600));
        ADD_FAILURE() << "the watch started with an expired certificate";
    } catch (const EtcdUnreachableError& e) {
        EXPECT_NE(std::string(e.what()).find(etcd_.endpoint(0) + ": TLS: "), std::string::npos)
            << e.what();
    }
    EXPECT_NE(Log().find("etcd " + etcd_.endpoint(0) + ": watch failed: TLS: "), std::string::npos)
        << Log();
    EXPECT_NE(Log().find("it expired on 2020-01-02"), std::string::npos) << Log();
}

TEST_F(EtcdTlsTest, PlainHttpToTheTlsPortFails) {
    EtcdOptions options = Options({});
    options.endpoints[0].replace(0, 5, "http");  // https:// -> http://
    options.call_timeout = milliseconds(300);    // not TLS's failure: retried to the end
    EtcdClient client(options);
    try {
        client.Range(EtcdKeys::Key("k"));
        ADD_FAILURE() << "plain http reached a TLS port";
    } catch (const EtcdUnreachableError& e) {
        EXPECT_NE(std::string(e.what()).find(options.endpoints[0] + ": Empty reply from server"),
                  std::string::npos)
            << e.what();
    }
}

// Three members whose raft traffic is TLS too, with make-lab-ca's member
// certificates (serverAuth and clientAuth) on both ports, as etcd.md's
// "The members' own traffic" runs them: the cluster forms, a write through
// member 0 reads back through member 2, every peer URL is https, and the
// peer port refuses plain http and a certificate of another CA.
TEST(EtcdPeerTls, ThreeMembersReplicateOverTls) {
    test::EtcdServerTls tls{kMain + "/member-m0.crt", kMain + "/member-m0.key", kMain + "/ca.crt",
                            Client("good")};
    tls.peer_tls = true;
    test::EtcdCluster etcd(3, tls);
    ASSERT_EQ(etcd.peer_url(0).rfind("https://127.0.0.1:", 0), 0u);

    EtcdOptions first = etcd.Options();
    first.endpoints = {etcd.endpoint(0)};
    EtcdClient(first).Put("peer-tls/a", "1");
    EtcdOptions third = etcd.Options();
    third.endpoints = {etcd.endpoint(2)};
    EtcdRangeResult got = EtcdClient(third).Range(EtcdKeys::Key("peer-tls/a"));
    ASSERT_EQ(got.kvs.size(), 1u);
    EXPECT_EQ(got.kvs[0].value, "1");

    HttpPoster good(Client("good"));
    HttpReply members = good.Post(etcd.endpoint(0) + "/v3/cluster/member/list", "{}",
                                  milliseconds(500), milliseconds(2000));
    ASSERT_TRUE(members.answered) << members.failure;
    auto list = nlohmann::json::parse(members.body, nullptr, false);
    ASSERT_TRUE(list.is_object() && list.contains("members")) << members.body;
    ASSERT_EQ(list["members"].size(), 3u) << members.body;
    for (const auto& m : list["members"])
        for (const auto& url : m["peerURLs"])
            EXPECT_EQ(url.get<std::string>().rfind("https://", 0), 0u) << members.body;

    std::string plain = etcd.peer_url(0);
    plain.replace(0, 5, "http");  // https:// -> http://
    HttpReply r =
        HttpPoster().Post(plain + "/version", "{}", milliseconds(500), milliseconds(2000));
    EXPECT_FALSE(r.answered) << "plain http reached the peer port: " << r.status << " " << r.body;
    HttpPoster stranger(Client("stranger", kMain + "/ca.crt", kOther));
    r = stranger.Post(etcd.peer_url(0) + "/version", "{}", milliseconds(500), milliseconds(2000));
    EXPECT_FALSE(r.answered) << "another CA's certificate reached the peer port: " << r.body;
    EXPECT_NE(r.failure.find("refuses a client certificate"), std::string::npos) << r.failure;
}

// chorusctl, the binary, takes the same TLS files from its options, the
// environment or chorusd's config.
class ChorusctlTls : public EtcdTlsTest {
protected:
    // Runs chorusctl with args; returns its exit status, output in out.
    int Chorusctl(const std::string& args, std::string& out) {
        return test::RunShell(CHORUSCTL " " + args, out);
    }
};

TEST_F(ChorusctlTls, FromItsOptionsAndFromChorusdsConfig) {
    const std::string ep = etcd_.endpoint(0);
    const EtcdTls good = Client("good");
    std::string out;
    EXPECT_EQ(Chorusctl("cluster node list --etcd " + ep + " --etcd-cacert " + good.ca_file +
                            " --etcd-cert " + good.cert_file + " --etcd-key " + good.key_file,
                        out),
              0)
        << out;

    test::TempDir dir;
    test::WriteFile(dir / "chorusd.conf", "[node]\nid = 1\n[cluster]\netcd = [\"" + ep +
                                              "\"]\netcd_ca_file = \"" + good.ca_file +
                                              "\"\netcd_cert_file = \"" + good.cert_file +
                                              "\"\netcd_key_file = \"" + good.key_file + "\"\n");
    EXPECT_EQ(Chorusctl("cluster node list --config " + dir / "chorusd.conf", out), 0) << out;

    // The expired certificate instead: exit 1, and the reason.
    const EtcdTls old = Client("old");
    EXPECT_EQ(Chorusctl("cluster node list --config " + dir / "chorusd.conf" + " --etcd-cert " +
                            old.cert_file + " --etcd-key " + old.key_file,
                        out),
              1)
        << out;
    EXPECT_NE(out.find(ep + ": TLS: "), std::string::npos) << out;
    EXPECT_NE(out.find("it expired on 2020-01-02"), std::string::npos) << out;

    EXPECT_EQ(Chorusctl("cluster node list --etcd " + ep + " --etcd-cacert /nonexistent.crt", out),
              2);
    EXPECT_NE(out.find("--etcd-cacert: cannot read '/nonexistent.crt': No such file or directory"),
              std::string::npos)
        << out;
}

}  // namespace
}  // namespace chorus
