import Foundation
import Testing

@testable import NetworkCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Task ids")
struct TaskIDTests {
    let pool = TaskPool.stubbed()

    @Test("a derived id is the method and the URL with its query sorted")
    func derived() throws {
        let endpoint = TestEndpoint(path: "search?lang=en", task: .urlParameters(["q": "a b", "page": 2]))
        #expect(try pool.taskID(for: endpoint) == "GET https://api.example.com/v1/search?lang=en&page=2&q=a%20b")
    }

    @Test("parameter order does not change the id")
    func orderIndependent() throws {
        let one = TestEndpoint(path: "s?b=2&a=1")
        let two = TestEndpoint(path: "s?a=1&b=2")
        #expect(try pool.taskID(for: one) == pool.taskID(for: two))
    }

    @Test(
        "credentials in the query never appear in a derived id, yet different credentials give different ids",
        arguments: ["api_key", "token", "access_token", "password", "session_id", "request_token", "API_KEY"])
    func credentialsFingerprinted(name: String) throws {
        let secret = "s3cr3t-\(name)"
        let id = try pool.taskID(for: TestEndpoint(task: .urlParameters([name: secret, "page": 1])))
        #expect(!id.contains(secret))
        #expect(id.contains("\(name)=\(Redactor.fingerprint(secret))"))
        let other = try pool.taskID(for: TestEndpoint(task: .urlParameters([name: secret + "2", "page": 1])))
        #expect(other != id)
        #expect(try pool.taskID(for: TestEndpoint(task: .urlParameters([name: secret, "page": 1]))) == id)
    }

    @Test("query items whose names merely contain a credential word tell calls apart (page_token=P2, P3)")
    func pageTokens() throws {
        let two = try pool.taskID(for: TestEndpoint(task: .urlParameters(["page_token": "P2"])))
        let three = try pool.taskID(for: TestEndpoint(task: .urlParameters(["page_token": "P3"])))
        #expect(two != three)
        #expect(!two.contains("P2"))
    }

    @Test("credential headers give the id a fingerprint of them; other headers do not show")
    func credentialHeaders() throws {
        let a = try pool.taskID(for: TestEndpoint(headers: ["Authorization": "Bearer A-token"]))
        let b = try pool.taskID(for: TestEndpoint(headers: ["Authorization": "Bearer B-token"]))
        let cookie = try pool.taskID(for: TestEndpoint(headers: ["Cookie": "sid=A-token"]))
        #expect(a != b)
        #expect(a != cookie)
        #expect(a.hasPrefix("GET https://api.example.com/v1/items credentials=#"))
        #expect(![a, b, cookie].contains { $0.contains("token") })
        #expect(try pool.taskID(for: TestEndpoint(headers: ["X-Trace": "1"])) == "GET https://api.example.com/v1/items")
    }

    @Test("the fingerprint is stable in a process, differs between secrets and hides them")
    func fingerprint() {
        #expect(Redactor.fingerprint("abc") == Redactor.fingerprint("abc"))
        #expect(Redactor.fingerprint("abc") != Redactor.fingerprint("abd"))
        #expect(Redactor.fingerprint("abc").count == 13)
        #expect(Redactor.fingerprint("abc").hasPrefix("#"))
    }

    @Test("user info is a credential, and the fragment is left out")
    func userInfo() throws {
        let id = try pool.taskID(for: TestEndpoint(baseURL: "https://ana:hunter2@h.com", path: "x"))
        #expect(id.hasPrefix("GET https://h.com/x credentials=#"))
        #expect(!id.contains("hunter2") && !id.contains("ana"))
        let request = URLRequest(url: URL(string: "https://h.com/x?b=1&a=2#section")!)
        #expect(TaskID.derive(from: request) == "GET https://h.com/x?a=2&b=1")
        // A '#' written in an endpoint's path is a character of the path, not a fragment.
        #expect(
            try pool.taskID(for: TestEndpoint(baseURL: "https://h.com", path: "tags/#1"))
                == "GET https://h.com/tags/%231")
    }

    @Test("different bodies give different ids; the same body the same id")
    func bodies() throws {
        let a = TestEndpoint(method: .post, task: .bodyParameters(["n": 1]))
        let b = TestEndpoint(method: .post, task: .bodyParameters(["n": 2]))
        #expect(try pool.taskID(for: a) != pool.taskID(for: b))
        #expect(try pool.taskID(for: a) == pool.taskID(for: a))
        #expect(try pool.taskID(for: a).hasPrefix("POST https://api.example.com/v1/items body="))
    }

    @Test("the body digest is stable FNV-1a")
    func digest() {
        #expect(TaskID.digest(Data()) == "cbf29ce484222325")
        #expect(TaskID.digest(Data("a".utf8)) == "af63dc4c8601ec8c")
    }

    @Test("DataTask is equal and hashes by id")
    func hashable() async throws {
        let pool = TaskPool.stubbed(delay: 5)
        pool.send(TestEndpoint(), id: "same") { _ in }
        let task = try #require(pool.task(id: "same"))
        #expect(task == pool.task(id: "same"))
        #expect(Set([task, try #require(pool.task(id: "same"))]).count == 1)
        pool.cancelAll()
    }
}
