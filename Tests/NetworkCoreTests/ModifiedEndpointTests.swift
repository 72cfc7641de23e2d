import Foundation
import Testing

@testable import NetworkCore

@Suite("Modified endpoints")
struct ModifiedEndpointTests {
    @Test("base URL, query and headers are applied; everything else is the base's")
    func modifies() throws {
        let base = TestEndpoint(
            path: "search?lang=en", method: .post, task: .urlParameters(["q": "x y"]), headers: ["A": "1", "B": "1"],
            timeout: 9, sampleData: Data([1]))
        let modified = base.with(baseURL: "http://127.0.0.1:9/v2").addingQuery(["api_key": "k&1", "z": "2"])
            .addingHeaders(["B": "2"])
        let request = try modified.urlRequest()
        #expect(request.url?.absoluteString == "http://127.0.0.1:9/v2/search?lang=en&api_key=k%261&z=2&q=x%20y")
        #expect(request.httpMethod == "POST")
        #expect(request.timeoutInterval == 9)
        #expect(request.value(forHTTPHeaderField: "A") == "1")
        #expect(request.value(forHTTPHeaderField: "B") == "2")
        #expect(modified.sampleData == Data([1]))
    }

    @Test("chained modifications stay one level deep and later values win")
    func chaining() throws {
        let modified = TestEndpoint(path: "p").addingQuery(["k": "1"]).addingQuery(["k": "2"]).with(
            baseURL: "https://a.com"
        )
        .with(baseURL: "https://b.com")
        #expect(type(of: modified) == ModifiedEndpoint<TestEndpoint>.self)
        #expect(try modified.urlRequest().url?.absoluteString == "https://b.com/p?k=2")
    }

    @Test("an extra query credential shows in the derived id as its fingerprint only")
    func credentialNotInID() throws {
        let pool = TaskPool.stubbed()
        let id = try pool.taskID(for: TestEndpoint().addingQuery(["api_key": "SECRET"]))
        #expect(id == "GET https://api.example.com/v1/items?api_key=\(Redactor.fingerprint("SECRET"))")
    }
}
