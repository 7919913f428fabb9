"""Scrapy peer for the broad-crawl benchmark (bench/broad.sh): a synthetic web of many hosts.

run:  scrapy runspider broad_spider.py -a seeds_file=SEEDS.txt (or -a start="URL URL ...") -a stats=STATS.json \\
        -s TWISTED_DNS_RESOLVER=broad_spider.WebResolver -s BROAD_DNS_SERVER=IP:PORT \\
        -s REACTOR_THREADPOOL_MAXSIZE=20 -s CLOSESPIDER_ITEMCOUNT=PAGES -O OUT.jsonl

Configured as Scrapy's "Broad Crawls" page advises (DownloaderAwarePriorityQueue, breadth-first
order, INFO logs, no cookies, a short timeout, a larger thread pool), with kumo's politeness
(`kumo crawl --broad`): 256 requests in flight, 1 per host, 1 s between a host's requests,
robots.txt obeyed, 1 retry. Scrapy has no limit per IP address (CONCURRENT_REQUESTS_PER_IP is
deprecated and refused by that queue): the test site's judge reports it instead.

Follows every <a href> to any *.test host; one item per page (url, status).

Names are resolved only by the synthetic web's DNS server, never the system's: WebResolver.
The reactor's resolver and thread pool are set up from the process's settings, before the
spider's own apply, so TWISTED_DNS_RESOLVER, BROAD_DNS_SERVER and REACTOR_THREADPOOL_MAXSIZE
must be given with -s; the spider refuses to start under any other resolver.

The page bound is CLOSESPIDER_ITEMCOUNT (-s): one item per page, robots.txt answers not
counted, as kumo's --max-pages (CLOSESPIDER_PAGECOUNT would count robots.txt answers too).
"""
import json
import time
from urllib.parse import urlsplit

import scrapy
from scrapy.resolver import dnscache
from twisted.internet import defer
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import IResolverSimple
from twisted.names import client, dns
from zope.interface import implementer


@implementer(IResolverSimple)
class WebResolver:
    """Asks only BROAD_DNS_SERVER (IP:PORT) for A records, through twisted.names, with
    Scrapy's DNS cache (DNSCACHE_ENABLED, DNSCACHE_SIZE) and timeout (DNS_TIMEOUT)."""

    def __init__(self, reactor, server, cache_size, timeout):
        ip, _, port = server.rpartition(":")
        if not ip or not port.isdigit():
            raise ValueError(f"BROAD_DNS_SERVER must be IP:PORT, not {server!r}")
        self.reactor = reactor
        self.server = (ip, int(port))
        self.names = client.Resolver(servers=[self.server], reactor=reactor)
        dnscache.limit = cache_size
        self.timeout = timeout

    @classmethod
    def from_crawler(cls, crawler, reactor):
        s = crawler.settings
        server = s.get("BROAD_DNS_SERVER")
        if not server:
            raise ValueError("WebResolver needs -s BROAD_DNS_SERVER=IP:PORT")
        cache_size = s.getint("DNSCACHE_SIZE") if s.getbool("DNSCACHE_ENABLED") else 0
        return cls(reactor, server, cache_size, s.getfloat("DNS_TIMEOUT"))

    def install_on_reactor(self):
        self.reactor.installResolver(self)

    def getHostByName(self, name, timeout=()):
        if name in dnscache:
            return defer.succeed(dnscache[name])
        # An A query (twisted.names' own getHostByName asks for ALL records, which the test
        # site's server answers with no data), one try of DNS_TIMEOUT as Scrapy's default.
        d = self.names.lookupAddress(name, timeout=(self.timeout,))
        d.addCallbacks(self._address, self._failed, callbackArgs=(name,), errbackArgs=(name,))
        return d

    def _address(self, result, name):
        answers, _authority, _additional = result
        for rr in answers:
            if rr.type == dns.A:
                addr = rr.payload.dottedQuad()
                if dnscache.limit:
                    dnscache[name] = addr
                return addr
        raise DNSLookupError(f"{name}: no A record")

    def _failed(self, failure, name):
        # NXDOMAIN, SERVFAIL or no answer: what Scrapy's resolvers raise for a failed lookup
        raise DNSLookupError(f"{name}: {failure.getErrorMessage() or failure.type.__name__}")


class BroadSpider(scrapy.Spider):
    name = "broad"
    custom_settings = {
        "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.DownloaderAwarePriorityQueue",
        "CONCURRENT_REQUESTS": 256,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY": 1,
        "DOWNLOAD_DELAY_JITTER": 0,  # RANDOMIZE_DOWNLOAD_DELAY = False, as Scrapy 2.19 spells it
        "ROBOTSTXT_OBEY": True,
        "COOKIES_ENABLED": False,
        "RETRY_ENABLED": True,
        "RETRY_TIMES": 1,
        "DOWNLOAD_TIMEOUT": 15,
        "REACTOR_THREADPOOL_MAXSIZE": 20,  # process-level: also given with -s (see above)
        "LOG_LEVEL": "INFO",
        # breadth-first order
        "DEPTH_PRIORITY": 1,
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
        "AUTOTHROTTLE_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "HTTPCACHE_ENABLED": False,
        "HTTPPROXY_ENABLED": False,  # the synthetic web is on loopback: no proxy from the env
        "USER_AGENT": "scrapybench/0.1",
        "FEED_EXPORT_ENCODING": "utf-8",
    }

    def __init__(self, start="", seeds_file=None, stats=None, *a, **kw):
        super().__init__(*a, **kw)
        self.start_urls = start.split()
        if seeds_file:
            # One URL a line: a long seed list is too long for one argument.
            with open(seeds_file) as f:
                self.start_urls += [line.strip() for line in f if line.strip()]
        self.stats_path = stats
        self.pages = 0
        self.t0 = time.monotonic()

    async def start(self):
        from twisted.internet import reactor

        if not isinstance(reactor.resolver, WebResolver):
            raise RuntimeError(
                "the reactor's resolver is not WebResolver: run with "
                "-s TWISTED_DNS_RESOLVER=broad_spider.WebResolver -s BROAD_DNS_SERVER=IP:PORT")
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response):
        self.pages += 1
        yield {"url": response.url, "status": response.status}
        if not hasattr(response, "css"):  # not text: no links
            return
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href)
            p = urlsplit(url)
            if p.scheme in ("http", "https") and (p.hostname or "").endswith(".test"):
                yield scrapy.Request(url, callback=self.parse)

    def closed(self, reason):
        if self.stats_path:
            s = {k: (v.isoformat() if hasattr(v, "isoformat") else v)
                 for k, v in self.crawler.stats.get_stats().items()}
            s["peer"] = "scrapy-broad"
            s["reason"] = reason
            s["pages"] = self.pages
            s["spider_seconds"] = time.monotonic() - self.t0
            with open(self.stats_path, "w") as f:
                json.dump(s, f, default=str, sort_keys=True)
