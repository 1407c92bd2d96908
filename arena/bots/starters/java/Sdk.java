// The Six Arena protocol in Java with the standard library only: one JSON object a line
// on stdin, one on stdout (docs/protocol.md). Sdk.run(name, version, decide) answers
// hello and, for every request, calls decide.decide(kind, view, legal): kind is what is
// asked ("play", "row"...), view the seat's view as JSON text, legal the legal answers,
// each as its JSON text ("34", "[3, 17]", "\"10c\""); it returns the index of the one to
// play. Sdk.field(view, "hand") finds a field of an object, Sdk.item(json, i) an item of
// an array, Sdk.integer reads a number: enough to read any view. Print anything of your
// own to System.err: System.out is the protocol's.

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

public final class Sdk {
    public interface Decide {
        int decide(String kind, String view, List<String> legal);
    }

    private Sdk() {}

    /** Where the JSON value starting at at ends (past blanks before it), or -1 if cut short. */
    static int skip(String json, int at) {
        int depth = 0;
        boolean inString = false;
        while (at < json.length() && (json.charAt(at) == ' ' || json.charAt(at) == '\t')) at++;
        for (; at < json.length(); at++) {
            char c = json.charAt(at);
            if (inString) {
                if (c == '\\') {
                    at++;
                } else if (c == '"') {
                    inString = false;
                    if (depth == 0) return at + 1;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (--depth <= 0) return depth < 0 ? at : at + 1;
            } else if (depth == 0 && (c == ',' || c == '\n')) {
                return at;
            }
        }
        return depth == 0 && !inString ? at : -1;
    }

    /** Field key of the object json as JSON text (null if it has none). */
    public static String field(String json, String key) {
        int at = json.indexOf('{');
        if (at < 0) return null;
        for (at++; at < json.length(); ) {
            while (at < json.length() && (json.charAt(at) == ' ' || json.charAt(at) == ',')) at++;
            if (at >= json.length() || json.charAt(at) != '"') return null;
            int nameEnd = skip(json, at);
            if (nameEnd < 0) return null;
            String name = json.substring(at + 1, nameEnd - 1);
            at = nameEnd;
            while (at < json.length() && (json.charAt(at) == ' ' || json.charAt(at) == ':')) at++;
            int end = skip(json, at);
            if (end < 0) return null;
            if (name.equals(key)) return json.substring(at, end).trim();
            at = end;
            if (at < json.length() && json.charAt(at) == '}') return null;
        }
        return null;
    }

    /** Entry index of the object json as {key, value as JSON text} (null past its end). */
    public static String[] entry(String json, int index) {
        int at = json.indexOf('{') + 1;
        if (at == 0) return null;
        for (int i = 0; at < json.length(); i++) {
            while (at < json.length() && (json.charAt(at) == ' ' || json.charAt(at) == ',')) at++;
            if (at >= json.length() || json.charAt(at) != '"') return null;
            int nameEnd = skip(json, at);
            if (nameEnd < 0) return null;
            String name = json.substring(at + 1, nameEnd - 1);
            at = nameEnd;
            while (at < json.length() && (json.charAt(at) == ' ' || json.charAt(at) == ':')) at++;
            int end = skip(json, at);
            if (end < 0) return null;
            if (i == index) return new String[] {name, json.substring(at, end).trim()};
            at = end;
        }
        return null;
    }

    /** Item index of the array json as JSON text (null past its end). */
    public static String item(String json, int index) {
        int at = json.indexOf('[');
        if (at < 0) return null;
        at++;
        for (int i = 0; at < json.length(); i++) {
            while (at < json.length() && (json.charAt(at) == ' ' || json.charAt(at) == ',')) at++;
            if (at >= json.length() || json.charAt(at) == ']') return null;
            int end = skip(json, at);
            if (end < 0) return null;
            if (i == index) return json.substring(at, end).trim();
            at = end;
        }
        return null;
    }

    /** A JSON number's integer value (0 if it is none). */
    public static long integer(String json) {
        try {
            return Long.parseLong(json.trim().split("[^0-9-]", 2)[0]);
        } catch (RuntimeException e) {
            return 0;
        }
    }

    /** A JSON string's text (escapes left as they are). */
    public static String text(String json) {
        return json != null && json.length() >= 2 ? json.substring(1, json.length() - 1) : "";
    }

    /** Speak the protocol as name version until bye. */
    public static void run(String name, String version, Decide decide) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        for (String line; (line = in.readLine()) != null; ) {
            String type = text(field(line, "type"));
            if (type.equals("hello")) {
                out.print("{\"type\":\"hello\",\"name\":\"" + name + "\",\"version\":\"" + version + "\"}\n");
            } else if (type.equals("request")) {
                String all = field(line, "legal");
                List<String> legal = new ArrayList<>();
                for (String one; all != null && (one = item(all, legal.size())) != null; ) legal.add(one);
                String view = field(line, "view");
                int chosen = legal.isEmpty() ? 0 : decide.decide(text(field(line, "kind")), view == null ? "{}" : view, legal);
                if (chosen < 0 || chosen >= legal.size()) chosen = 0;
                String id = field(line, "id");
                out.print("{\"type\":\"answer\",\"id\":" + integer(id == null ? "0" : id) + ",\"answer\":"
                        + (legal.isEmpty() ? "null" : legal.get(chosen)) + "}\n");
            } else if (type.equals("bye")) {
                break;
            }
            out.flush();
        }
        out.flush();
    }
}
