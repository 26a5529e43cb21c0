"""Chinese values for the fact comparison (``facts``): the numerals, the patterns of the
kinds of value they mark (weekday, month, date, clock time, relative day, count), and
the names of people and places.

Pure module: tables and compiled patterns, and ``number`` to read a numeral.
"""

from __future__ import annotations

import re

from hindsight_redis.core.text import HAN_CLASS
from hindsight_redis.language.calendar import HAN_DIGITS

NEGATED = re.compile(rf"[不没別别勿未無无非]+([{HAN_CLASS}])")
NEGATOR = re.compile(r"[不没別别勿未無无非]")
# Chinese characters that carry no topic (particles, prepositions, pronouns).
FUNCTION_CHARS = frozenset(
    "的了在是和也就都把被让给对从到向为于之这那很还又再将已吗呢吧啊呀哦我你他她它们"
)

# Chinese: numerals, and the kinds of value they mark.
_NUMERALS = "零〇一二两三四五六七八九十百千万"
WEEKDAY = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天1-7])")
MONTH = re.compile(rf"([{_NUMERALS}]{{1,3}}|\d{{1,2}})月")
DATE = re.compile(rf"([{_NUMERALS}]{{1,3}}|\d{{1,2}})[日号]")
CLOCK = re.compile(
    rf"(上午|早上|中午|下午|晚上)?([{_NUMERALS}]{{1,3}}|\d{{1,2}})[点時时](半|[{_NUMERALS}]{{1,3}}分|\d{{1,2}}分?)?"
)
DAY = re.compile(r"今天|明天|昨天|后天|前天|今晚|明晚|昨晚|本周|下周|上周")
COUNT = re.compile(
    rf"([{_NUMERALS}]{{1,6}})(?=个|位|人|次|元|块|岁|年|天|周|小时|分钟|公里|米|台|份|页|条|家|倍)"
)
_SURNAMES = (
    "王李张刘陈杨黄赵吴徐孙朱胡郭林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶程苏魏吕丁任"
    "沈姚卢姜崔钟谭陆汪范廖贾夏韦邹孟熊秦邱尹薛闫段雷侯史陶黎贺顾毛郝龚邵钱严覃戴莫孔汤马"
)
# A person's name where names go: at the start, after a comma, or after 是/叫/由/找/和...
NAME = re.compile(
    r"(?:^|(?<=[\s，。！？；、,.!?;:：])|(?<=是|叫|由|找|和|跟|给|问|请|让|换|改)|(?<=经理|老板|主管|同事|"
    r"联系|通知|交给|成了))"
    rf"((?:欧阳|司马|诸葛|上官|[{_SURNAMES}])[{HAN_CLASS}]{{1,2}}?)(?=[^{HAN_CLASS}]|$|负责|说|是|的|在|会|已|将|和|跟|来|去)"
)
_PLACE_NAMES = (
    "北京 上海 天津 重庆 广州 深圳 杭州 南京 苏州 武汉 成都 西安 长沙 郑州 青岛 厦门 大连 沈阳 "
    "哈尔滨 济南 合肥 福州 昆明 南宁 贵阳 兰州 太原 石家庄 宁波 无锡 东莞 佛山 珠海 香港 澳门 "
    "台北 新加坡 东京 大阪 首尔 伦敦 巴黎 柏林 纽约 旧金山 洛杉矶 西雅图 悉尼 多伦多 "
    "中国 美国 日本 韩国 英国 法国 德国 印度 加拿大 澳大利亚 俄罗斯"
)
# Known places anywhere; other places by their suffix, where places go (在/到/去/位于...).
PLACE = re.compile(
    "|".join(sorted(_PLACE_NAMES.split(), key=len, reverse=True))
    + r"|(?<=在|到|去|从|住|往|于)"
    + rf"[{HAN_CLASS}]{{1,3}}(?:省|区|县|镇|村|路|街|大道|机场|车站)"
)


def number(token: str) -> int:
    """A Chinese (or Arabic) numeral: 十二 -> 12, 两千 -> 2000, 五十万 -> 500000."""
    if token.isdigit():
        return int(token)
    total, section, current = 0, 0, 0  # 万-sections done, this section, the last digit
    for ch in token:
        if ch in HAN_DIGITS:
            current = HAN_DIGITS[ch]
        elif ch == "万":
            total += (section + current) * 10_000
            section = current = 0
        else:
            section += (current or 1) * {"十": 10, "百": 100, "千": 1000}[ch]
            current = 0
    return total + section + current
