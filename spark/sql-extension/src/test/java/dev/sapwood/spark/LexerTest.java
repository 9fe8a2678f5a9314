package dev.sapwood.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sapwood.spark.Lexer.Kind;
import dev.sapwood.spark.Lexer.Token;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The tokens of a statement: kinds, texts (quotes undone) and where each starts and ends. */
class LexerTest {
    /** Every token up to EOF as {@code KIND:text@start-end}. */
    static List<String> tokens(String sql) {
        Lexer lexer = new Lexer(sql);
        List<String> out = new ArrayList<>();
        for (int i = 0; ; i++) {
            Token t = lexer.get(i);
            out.add(t.kind + ":" + t.text + "@" + t.start + "-" + t.end);
            if (t.kind == Kind.EOF) {
                return out;
            }
        }
    }

    static Stream<Arguments> table() {
        return Stream.of(
            Arguments.of("CREATE BRANCH etl", List.of(
                "WORD:CREATE@0-6", "WORD:BRANCH@7-13", "WORD:etl@14-17", "EOF:@17-17")),
            // Reference specs are one word: ~ ^ @ * : - + / are word characters.
            Arguments.of("main~1 etl@ab12 main*2026-11-22T09:00:00Z x^2 a/b", List.of(
                "WORD:main~1@0-6", "WORD:etl@ab12@7-15",
                "WORD:main*2026-11-22T09:00:00Z@16-41", "WORD:x^2@42-45", "WORD:a/b@46-49",
                "EOF:@49-49")),
            // A dot, a comma, a semicolon and anything else are tokens of their own.
            Arguments.of("ns.v, w;(", List.of(
                "WORD:ns@0-2", "DOT:.@2-3", "WORD:v@3-4", "COMMA:,@4-5", "WORD:w@6-7",
                "SEMI:;@7-8", "OTHER:(@8-9", "EOF:@9-9")),
            // Backquoted names: `` is a backquote; the text is the name.
            Arguments.of("`we``ird name`.`in`", List.of(
                "QUOTED:we`ird name@0-14", "DOT:.@14-15", "QUOTED:in@15-19", "EOF:@19-19")),
            // Strings: '' and a backslash escape the next character; double quotes too.
            Arguments.of("'it''s' \"a\\\"b\"", List.of(
                "STRING:it's@0-7", "STRING:a\"b@8-14", "EOF:@14-14")),
            // Comments and blanks are skipped, block comments nest.
            Arguments.of("-- a line\nSHOW /* x /* nested */ y */ LOG\t\n", List.of(
                "WORD:SHOW@10-14", "WORD:LOG@38-41", "EOF:@43-43")),
            // An unterminated quote is one token to the end, which the parser rejects.
            Arguments.of("USE REFERENCE `etl", List.of(
                "WORD:USE@0-3", "WORD:REFERENCE@4-13", "OTHER:`etl@14-18", "EOF:@18-18")),
            Arguments.of("   ", List.of("EOF:@3-3")));
    }

    @ParameterizedTest(name = "{index}: [{0}]")
    @MethodSource("table")
    void tokensOf(String sql, List<String> expected) {
        assertEquals(expected, tokens(sql));
    }

    @Test
    void pastTheEndIsEofAgain() {
        Lexer lexer = new Lexer("LIST");
        assertEquals(Kind.EOF, lexer.get(5).kind);
        assertEquals("LIST", lexer.get(0).text);
        assertEquals(Kind.EOF, lexer.get(1).kind);
    }

    @Test
    void tokensShowAsSparkSpellsThem() {
        Lexer lexer = new Lexer("extra");
        assertEquals("'extra'", lexer.get(0).shown());
        assertEquals("end of input", lexer.get(1).shown());
        assertEquals(true, lexer.get(0).is("EXTRA"));
    }
}
