/*
 * compensated (Kahan) summation: scalar recurrences through s and c (float).
 */
float kahan_sum_f32(int n, float x[n])
{
    float s = 0.0f;
    float c = 0.0f;

    for (int i = 0; i < n; i++) {
        float y = x[i] - c;
        float u = s + y;
        c = (u - s) - y;
        s = u;
    }
    return s;
}
