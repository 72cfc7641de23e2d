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
        "credentials in the query never appear in a derived id",
        arguments: ["api_key", "token", "access_token", "password", "session_id", "request_token", "API_KEY"])
    func credentialsLeftOut(name: String) throws {
        let secret = "s3cr3t-\(name)"
        let endpoint = TestEndpoint(task: .urlParameters([name: secret, "page": 1]))
        let id = try pool.taskID(for: endpoint)
        #expect(!id.contains(secret))
        #expect(id == "GET https://api.example.com/v1/items?page=1")
    }

    @Test("user info and fragment are left out")
    func userInfo() throws {
        let id = try pool.taskID(for: TestEndpoint(baseURL: "https://ana:hunter2@h.com", path: "x"))
        #expect(id == "GET https://h.com/x")
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
