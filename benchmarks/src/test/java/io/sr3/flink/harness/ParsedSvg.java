package io.sr3.flink.harness;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

import javax.xml.parsers.DocumentBuilderFactory;

import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;

/**
 * An SVG document parsed by the JDK's XML parser (so a test fails on malformed XML), with the
 * queries the plot tests ask: the elements of one {@code class}, and their text.
 */
record ParsedSvg(Document document) {

    static ParsedSvg parse(String svg) throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        return new ParsedSvg(factory.newDocumentBuilder().parse(new InputSource(new StringReader(svg))));
    }

    /** The elements named {@code tag} whose {@code class} attribute is {@code cls}, in document order. */
    List<Element> elements(String tag, String cls) {
        NodeList nodes = document.getElementsByTagNameNS("http://www.w3.org/2000/svg", tag);
        List<Element> out = new ArrayList<>();
        for (int i = 0; i < nodes.getLength(); i++) {
            Element e = (Element) nodes.item(i);
            if (e.getAttribute("class").equals(cls)) {
                out.add(e);
            }
        }
        return out;
    }

    /** The text of the {@code <text>} elements of class {@code cls}, in document order. */
    List<String> texts(String cls) {
        return elements("text", cls).stream().map(Element::getTextContent).toList();
    }

    int bars() {
        return elements("rect", "bar").size();
    }
}
